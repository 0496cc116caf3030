"""Serving the app: the JSON API (gradio_client) built from the features' declared endpoints, and the Hugging
Face Space.

api      what gr.api serves for each endpoint of the tab table (its arguments, documentation, limits and errors);
         Endpoints: every endpoint as plain Python over the shared models
space    attention-lab space USER/SPACE (python -m attention_lab.space): upload what a Space runs
"""
