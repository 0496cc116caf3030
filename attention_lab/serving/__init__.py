"""Serving the app: the JSON API (gradio_client), the Hugging Face Space, and the cores a request may use.

api      /translate, /attention, /heads, /training, /ablate, /edit, as plain Python over the shared models
space    python -m attention_lab.serving.space USER/SPACE: upload what a Space runs
cores    how many cores this process may use (a container's quota included)
"""
