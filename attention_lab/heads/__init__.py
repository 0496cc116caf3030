"""Head tests: from looking to testing. Every head summarised over a decoding, heads ablated from the real forward
pass and cross heads edited to look elsewhere, through the library's Interventions (nothing here computes attention).
Heads' names and summaries are shared with the survey (attention_lab.attention: naming, summaries, grids).

    ablation     what removing heads changes, step by step; every head's importance in one batched pass
    editing      a cross head pointed at chosen source tokens at one step
    effects      an ablation's effects as the page draws them
    summary_cache  Summaries: the summaries made, kept for the next user who asks
    actions      Ablate and edit on a user's run; state, what the tab keeps of a run
    api          /heads, /ablate and /edit
    feature      the Heads tab: its layout, view and events
    summary.mjs  the summary drawn (a click on a cell focuses that head); effects.mjs, what an ablation changed
"""
