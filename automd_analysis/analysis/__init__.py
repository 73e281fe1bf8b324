"""One module per paper analysis; each turns the score store (+ annotations) into tidy DataFrames.

Import the module you need (``from automd_analysis.analysis import primary``); this package does not
import its submodules eagerly.
"""
