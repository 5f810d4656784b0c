"""nn -> linalg lowerings of the op families."""
