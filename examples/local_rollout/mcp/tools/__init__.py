from .math_tools import *  # noqa: F403
