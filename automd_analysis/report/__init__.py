"""Paper-style tables, figures, notebook execution (papermill) and the HTML report site."""
