"""The lab: research on cardzoo, not part of the product (not packaged, `pytest -m lab`).

Its commands run from a checkout (``python -m lab.headroom``); it may import the product, and
nothing in the product imports it. README.md says how a result moves into the product.
"""
