"""Head tests: from looking to testing. Every head summarised over a decoding, heads ablated from the real forward
pass and cross heads edited to look elsewhere, through the library's Interventions (nothing here computes attention).

    naming       "kind:layer:head" (1-based, "*" for all) <-> transformer.Head; labels and choices
    summaries    entropy, weight on special tokens, gold alignment per head
    ablation     what removing heads changes, step by step; every head's importance in one batched pass
    editing      a cross head pointed at chosen source tokens at one step
    figures      plotly figures of the summary and of an ablation's effects
    tab          what the Heads tab shows of a user's run
    actions      Ablate and edit on a user's run
"""
