"""Attribution: why the model wrote a token, as a value per source token and per decoder input, by the methods in
methods.METHODS (Captum's, and value zeroing). The Why tab and the Trust tab both read them."""
