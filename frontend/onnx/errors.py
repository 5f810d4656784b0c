"""The one exception the ONNX frontend raises for a model it cannot import."""


class OnnxImportError(ValueError):
    """A model xrelay cannot import: unreadable, unsupported ops, dynamic shapes, bad values.
    The message is complete and meant for the user as it stands."""
