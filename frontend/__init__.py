"""xrelay.frontend: model builders (`resnet`, `tiny`), the `GraphBuilder` they share, and
`bind_params_by_name`."""

from xrelay.frontend import resnet, tiny
from xrelay.frontend.bind_params import bind_params_by_name
from xrelay.frontend.builder import GraphBuilder

__all__ = ["GraphBuilder", "bind_params_by_name", "resnet", "tiny"]
