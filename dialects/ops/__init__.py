"""The nn ops, one module per family; each op class sits beside its shape rule.

elementwise (unary maps, broadcasting binary ops), window (conv, pools), shape (reshapes,
transposes, layout transforms), linear (dense, bias_add), norm (batch_norm, softmax).
`xrelay.dialects.nn` gathers them into the dialect; CONTRIBUTING.md has the checklist for a new op.
"""
