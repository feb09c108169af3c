"""Pipeline configs composed of the shared ExperimentConfig and their own fields.

A pipeline's config (``RouterConfig``, ``TransferConfig``, ``AblationConfig``,
``RobustnessConfig``) holds the fields every claim shares as one ``ExperimentConfig``, its
``experiment``, and declares only its own fields; the shared ones are validated once, by
``ExperimentConfig``. It is built whole or from flat keywords, the notebooks' parameters::

    RouterConfig(experiment=ExperimentConfig(datasets=("musique",)), tie_rule="q")
    RouterConfig(dataset="musique", tie_rule="q")               # the same config
    RouterConfig.from_parameters(dataset="musique", tie_rule="q", alpha=None, output_dir="x")

A flat shared keyword (a key of :attr:`ComposedConfig.SHARED`) replaces that part of
``experiment`` (the one given, else the field's default); it reads back flat too
(``cfg.alpha is cfg.experiment.alpha``). ``ComposedConfig.to_dict()``, and so the
``config_hash`` that names artefacts in records and router files, is the flat mapping of
:attr:`ComposedConfig.FLAT` in its order, plus every other field of ``experiment`` that differs
from the default: a config means what it always meant and hashes as it always did.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from typing import Any, ClassVar

from regime_core.config import ConfigMixin, _jsonable
from regime_core.experiments.common import ExperimentConfig
from regime_core.router.evaluation import Bootstrap

#: The shared fields every routing pipeline reads, by their flat names.
ROUTING_SHARED: dict[str, str] = {
    name: name
    for name in ("pool", "alpha", "k", "seed", "sample_size", "split", "bootstrap_resamples",
                 "confidence", "exclude_bridge", "tiny_pools")
}  # fmt: skip


def _part(spec: str) -> tuple[str, int | slice | None]:
    """``"datasets[0]"`` -> ("datasets", 0); ``"datasets[1:]"`` -> ("datasets", slice(1, None))."""
    name, _, index = spec.partition("[")
    if not index:
        return name, None
    index = index.rstrip("]")
    if ":" in index:
        return name, slice(int(index.split(":")[0] or 0), None)
    return name, int(index)


class ComposedConfig(ConfigMixin):
    """Base of a frozen pipeline config with an ``experiment`` field (see the module docstring).

    Subclasses are ``@dataclass(frozen=True, init=False)``, declare ``experiment`` with the
    pipeline's default and set :attr:`SHARED` and :attr:`FLAT`.
    """

    #: flat name -> the part of ``experiment`` it stands for: a field (``"alpha"``), one element
    #: of a tuple field (``"datasets[0]"``) or its tail (``"datasets[1:]"``).
    SHARED: ClassVar[Mapping[str, str]] = {}
    #: The flat names, in the order ``to_dict`` has always listed them.
    FLAT: ClassVar[tuple[str, ...]] = ()

    experiment: ExperimentConfig

    def __init__(self, experiment: ExperimentConfig | None = None, **parameters: Any) -> None:
        cls = type(self)
        own = [f for f in dataclasses.fields(self) if f.name != "experiment"]  # type: ignore[arg-type]
        names = {f.name for f in own}
        unknown = sorted(set(parameters) - names - set(cls.SHARED))
        if unknown:
            raise TypeError(f"{cls.__name__}() got unexpected keyword arguments {unknown}")
        base = cls.default_experiment() if experiment is None else experiment
        shared = {k: v for k, v in parameters.items() if k in cls.SHARED and k not in names}
        if shared:
            base = cls._replace_shared(base, shared)
        object.__setattr__(self, "experiment", base)
        for f in own:
            if f.name in parameters:
                value = parameters[f.name]
            elif f.default_factory is not dataclasses.MISSING:
                value = f.default_factory()
            else:
                value = f.default
            object.__setattr__(self, f.name, value)
        self.__post_init__()

    @classmethod
    def default_experiment(cls) -> ExperimentConfig:
        """The ``experiment`` of this pipeline when none is given (the field's default)."""
        field = next(f for f in dataclasses.fields(cls) if f.name == "experiment")  # type: ignore[arg-type]
        return field.default_factory()  # type: ignore[misc]

    @classmethod
    def _replace_shared(
        cls, experiment: ExperimentConfig, flat: Mapping[str, Any]
    ) -> ExperimentConfig:
        if not isinstance(experiment, ExperimentConfig):
            raise ValueError(f"{cls.__name__}.experiment must be an ExperimentConfig")
        changes: dict[str, Any] = {}
        for name, value in flat.items():
            field, index = _part(cls.SHARED[name])
            if index is None:
                changes[field] = value
                continue
            parts = list(changes.get(field, getattr(experiment, field)))
            if isinstance(index, slice):
                parts[index] = [value] if isinstance(value, str) else list(value)
            else:
                parts[index : index + 1] = [value]
            changes[field] = tuple(parts)
        cls.check_shared(changes)
        try:
            return dataclasses.replace(experiment, **changes)
        except (TypeError, ValueError) as err:
            raise ValueError(f"{cls.__name__}: {err}") from None

    @classmethod
    def check_shared(cls, changes: Mapping[str, Any]) -> None:
        """Checks on the shared fields a flat build is about to set (raise ValueError)."""

    def validate(self) -> None:
        if not isinstance(self.experiment, ExperimentConfig):
            raise ValueError(f"{type(self).__name__}.experiment must be an ExperimentConfig")

    def __getattr__(self, name: str) -> Any:
        experiment = self.__dict__.get("experiment")
        spec = type(self).SHARED.get(name)
        if spec is None or experiment is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        field, index = _part(spec)
        value = getattr(experiment, field)
        return value if index is None else value[index]

    @property
    def bootstrap(self) -> Bootstrap:
        """The bootstrap of every interval this config's pipeline reports."""
        e = self.experiment
        return Bootstrap(resamples=e.bootstrap_resamples, confidence=e.confidence, seed=e.seed)

    def to_dict(self) -> dict[str, Any]:
        flat = {name: getattr(self, name) for name in self.FLAT}
        covered = {_part(self.SHARED[n])[0] for n in self.FLAT if n in self.SHARED}
        mine = self.experiment.to_dict()
        default = self.default_experiment().to_dict()
        flat.update({k: v for k, v in mine.items() if k not in covered and v != default[k]})
        return _jsonable(flat)

    @classmethod
    def from_parameters(cls, **parameters: Any) -> Any:
        """Build the config from a notebook's papermill parameters, flat (see
        :meth:`regime_core.config.ConfigMixin.from_parameters`: non-parameters are ignored,
        ``None`` means the default unless it is a value, each value is type-checked)."""
        own_hints = ConfigMixin._field_hints(cls)
        shared_hints = ConfigMixin._field_hints(ExperimentConfig)
        own = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        chosen: dict[str, Any] = {}
        for key, value in parameters.items():
            if key in own:
                hint, none_is_value = own_hints.get(key, Any), key in cls.NONE_IS_VALUE
            elif key in cls.SHARED:
                field, index = _part(cls.SHARED[key])
                hint = shared_hints.get(field, Any)
                if isinstance(index, int):
                    hint = typing.get_args(hint)[0]
                none_is_value = field in ExperimentConfig.NONE_IS_VALUE
            else:
                continue
            if value is None and not none_is_value:
                continue
            problem = ConfigMixin._type_problem(value, hint)
            if problem is not None:
                raise ValueError(
                    f"{cls.__name__}: parameter {key!r} must be {problem}, got "
                    f"{type(value).__name__} {value!r}"
                )
            chosen[key] = value
        return cls(**chosen)
