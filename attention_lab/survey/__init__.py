"""From one sentence to a corpus: every head surveyed over a test set (attention statistics, each head ablated alone,
and a pruning curve), written as survey.json and a self-contained survey.html, and shown in the Survey tab.

python -m attention_lab.survey --model M --data FILE --out DIR   (see __main__.py)
"""
