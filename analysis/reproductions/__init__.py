"""One module per paper; each reproduction is a function `(results, rerun) -> (Report, plot)`."""
