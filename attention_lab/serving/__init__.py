"""Serving the app: the JSON API (gradio_client), the Hugging Face Space, and the cores a request may use.

api      /translate, /attention, /heads, /training, /ablate, /edit, as plain Python over the shared models
space    attention-lab space USER/SPACE (python -m attention_lab.space): upload what a Space runs
cores    how many cores this process may use (a container's quota included)
"""
