"""nasforge_insight: why did the search choose this? Cell diagnostics of seed 001, chapter 4.

Cell width and depth (the thesis's definitions), the enumeration of a space's cell
topologies, the thesis's random variants, gradient variance, the filter-normalised loss
landscape and a convergence probe, gathered by ``nasforge insight`` into one static page.
"""
