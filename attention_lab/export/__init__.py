"""Export, in the Attention tab: the whole view as one HTML file that works offline (the lesson file,
attention_lab.decoding.lesson), and every head's weights as JSON (/attention).

    feature      its buttons and files
    api          /attention, the JSON export as an endpoint
"""
