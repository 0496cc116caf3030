"""Head tests: from looking to testing. Every head summarised over a decoding, heads ablated from the real forward
pass and cross heads edited to look elsewhere, through the library's Interventions (nothing here computes attention).

    naming       "kind:layer:head" (1-based, "*" for all) <-> transformer.Head; labels and choices
    summaries    entropy, weight on special tokens, gold alignment per head
    ablation     what removing heads changes, step by step; every head's importance in one batched pass
    editing      a cross head pointed at chosen source tokens at one step
    summary      the tab's data for the page: the summary's grids, an ablation's effects
    actions      Ablate and edit on a user's run; state, what the tab keeps of a run
    feature      the Heads tab: its layout, view and events
    summary.mjs  the summary drawn (a click on a cell focuses that head); effects.mjs, what an ablation changed
"""
