"""nasforge_insight: why did the search choose this? Cell diagnostics of Shu's thesis, ch. 4.

Chapter 4 is the cell-insight study ("Understanding architectures learnt by cell-based
neural architecture search", Shu et al., ICLR 2020): searches favour wide, shallow cells.
Cell width and depth (the thesis's definitions), the enumeration of a space's cell
topologies, the thesis's random variants, gradient variance, the filter-normalised loss
landscape and a convergence probe, gathered by ``nasforge insight`` into one static page.
"""
