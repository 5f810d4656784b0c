"""xrelay: a neural-network compiler prototype on xDSL with TVM-style pass instruments."""
