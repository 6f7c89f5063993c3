"""Task families and their registry (register / create / list; duplicates are rejected)."""

from __future__ import annotations

from typing import Any

from osint_gym.errors import ConfigError
from osint_gym.tasks.families.base import FamilyConfig, TaskFamily
from osint_gym.tasks.families.convoluted_trace import ConvolutedTrace
from osint_gym.tasks.families.cross_platform_linking import CrossPlatformLinking
from osint_gym.tasks.families.deanonymization import Deanonymization
from osint_gym.tasks.families.event_tracing import EventTracing
from osint_gym.tasks.families.identity_resolution import IdentityResolution
from osint_gym.tasks.families.network_discovery import NetworkDiscovery

_REGISTRY: dict[str, type[TaskFamily]] = {}


def register_family(cls: type[TaskFamily]) -> type[TaskFamily]:
    if cls.name in _REGISTRY:
        raise ConfigError(f"task family {cls.name!r} is already registered")
    _REGISTRY[cls.name] = cls
    return cls


def create_family(name: str, **config: Any) -> TaskFamily:
    if name not in _REGISTRY:
        raise ConfigError(f"unknown task family {name!r}; known: {', '.join(_REGISTRY)}")
    cls = _REGISTRY[name]
    try:
        return cls(cls.config_class(**config))
    except TypeError as exc:
        raise ConfigError(f"bad config for task family {name!r}: {exc}") from None


def list_families() -> list[str]:
    return list(_REGISTRY)


for _cls in (
    IdentityResolution,
    NetworkDiscovery,
    EventTracing,
    CrossPlatformLinking,
    Deanonymization,
    ConvolutedTrace,
):
    register_family(_cls)

__all__ = ["FamilyConfig", "TaskFamily", "create_family", "list_families", "register_family"]
