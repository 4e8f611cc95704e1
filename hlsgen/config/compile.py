"""The compile configuration: validated, frozen, loaded from a YAML file (docs/config.md).

`load_config(path)` reads the file with a safe YAML loader and checks every key: unknown keys (with
the nearest known key suggested), wrong types, out-of-range and bad enum values all raise a
one-line `HlsgenError` naming the file and the full key path. `config_from_dict` does the same for
a mapping already in memory; `Config.to_dict()` gives the plain form written into the report.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from hlsgen.config.hw import HwConfig, parse_hw
from hlsgen.config.limits import DEFAULT_LIMITS, LIMIT_KEYS, Limits
from hlsgen.config.schema import (
    Where,
    as_mapping,
    check_int,
    check_keys,
    get_bool,
    get_enum,
    get_float,
    get_int,
    read_yaml_mapping,
    suggest,
)
from hlsgen.numerics import ROUNDINGS, Rounding

CALIBRATIONS = ("minmax", "percentile")
BITS_RANGE = (2, 16)


@dataclass(frozen=True)
class InputQuant:
    """`quant.input`: the input quantizer of a model that has none (QKeras exports): either a fixed
    {bits, signed, scale, zero_point}, or a float range {min, max} from which hlsgen derives them."""

    bits: int = 8
    signed: bool = True
    scale: float | None = None
    zero_point: int = 0
    min: float | None = None
    max: float | None = None


@dataclass(frozen=True)
class QuantConfig:
    weight_bits: int = 8
    act_bits: int = 8
    act_signed: bool = True
    act_symmetric: bool = False
    calibration: str = "minmax"
    percentile: float = 99.99
    rounding: Rounding = Rounding.HALF_EVEN
    multiplier_bits: int = 16
    bias_bits: int = 32
    max_acc_bits: int = 48
    fuse_across_qdq: bool = False
    input: InputQuant | None = None


@dataclass(frozen=True)
class BnConfig:
    var_floor: float = 1.0e-4
    floor_is_error: bool = False


@dataclass(frozen=True)
class LayerOverride:
    """Per-layer bit widths; None means 'use the quant section'."""

    weight_bits: int | None = None
    act_bits: int | None = None

    def to_dict(self) -> dict[str, int]:
        return {k: v for k, v in asdict(self).items() if v is not None}


def _no_layers() -> Mapping[str, LayerOverride]:
    return MappingProxyType({})


@dataclass(frozen=True)
class Config:
    quant: QuantConfig = field(default_factory=QuantConfig)
    bn: BnConfig = field(default_factory=BnConfig)
    layers: Mapping[str, LayerOverride] = field(default_factory=_no_layers)
    hw: HwConfig = field(default_factory=HwConfig)
    limits: Limits = DEFAULT_LIMITS
    source: str = field(default="<defaults>", compare=False)  # where it came from, for messages

    def weight_bits(self, layer: str) -> int:
        o = self.layers.get(layer)
        return o.weight_bits if o is not None and o.weight_bits is not None else self.quant.weight_bits

    def act_bits(self, layer: str) -> int:
        o = self.layers.get(layer)
        return o.act_bits if o is not None and o.act_bits is not None else self.quant.act_bits

    def check_layer_names(self, known: Iterable[str]) -> None:
        """Refuse quantization overrides (`layers:`) for nodes the model does not have (a typo would be
        silently ignored)."""
        _check_names(Where(self.source, "layers"), self.layers, set(known), "layer of the model")

    def check_hw_layer_names(self, hardware: Iterable[str]) -> None:
        """Refuse `hw.layers` entries that name no hardware layer of the integer graph: the names
        report.md lists, which include the requants the quantize pass inserts (`concat.requant0`)
        and exclude nodes fused into another (a Relu, a BatchNormalization)."""
        _check_names(Where(self.source, "hw.layers"), self.hw.layers, set(hardware), "hardware layer")

    def to_dict(self) -> dict[str, Any]:
        return {
            "quant": asdict(self.quant),
            "bn": asdict(self.bn),
            "layers": {name: o.to_dict() for name, o in self.layers.items()},
            "hw": self.hw.to_dict(),
            "limits": self.limits.to_dict(),
        }


def _check_names(where: Where, entries: Mapping[str, Any], names: set[str], what: str) -> None:
    for name in entries:
        if name not in names:
            raise where.error(f"{where.key(name)!r} names no {what}{suggest(name, names)}")


# ---- parsing -----------------------------------------------------------------------------------
def load_config(path: str | Path | None, base: Mapping[str, Any] | None = None) -> Config:
    """The config in `path` (None: defaults). `base` holds raw sections the file overrides key by
    key, e.g. ``{"quant": graph.meta["quant"]}`` from a YAML model."""
    if path is None:
        return config_from_dict(dict(base or {}), "<defaults>")
    data = read_yaml_mapping(path, "config")
    return config_from_dict(merge_under(base or {}, data), str(path))


def config_limits(config: Config | str | Path | None) -> Limits:
    """Only the `limits:` of a config (a Config, a file or None: defaults), read before the model is
    loaded, since the limits guard the model's own reading. The config file itself is read under
    the default limits; its other sections are checked later by load_config."""
    if config is None:
        return DEFAULT_LIMITS
    if isinstance(config, Config):
        return config.limits
    data = read_yaml_mapping(config, "config")
    return parse_limits(data.get("limits"), Where(str(config)).child("limits"))


def merge_under(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Recursive merge of two raw mappings; values in `over` win."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge_under(out[key], value)
        else:
            out[key] = value
    return out


def config_from_dict(d: Mapping[str, Any], source: str) -> Config:
    top = Where(source)
    data = as_mapping(d, top)
    check_keys(data, ("quant", "bn", "layers", "hw", "limits"), top)
    return Config(
        quant=parse_quant(data.get("quant"), top.child("quant")),
        bn=_parse_bn(data.get("bn"), top.child("bn")),
        layers=_parse_layers(data.get("layers"), top.child("layers")),
        hw=parse_hw(data.get("hw"), top.child("hw")),
        limits=parse_limits(data.get("limits"), top.child("limits")),
        source=source,
    )


def parse_quant(section: Any, where: Where) -> QuantConfig:
    """The `quant` section (also used by the YAML model front-end for its own `quant:`)."""
    m = as_mapping(section, where)
    check_keys(m, QuantConfig.__dataclass_fields__, where)
    d = QuantConfig()
    lo, hi = BITS_RANGE
    return QuantConfig(
        weight_bits=get_int(m, "weight_bits", where, d.weight_bits, lo, hi),
        act_bits=get_int(m, "act_bits", where, d.act_bits, lo, hi),
        act_signed=get_bool(m, "act_signed", where, d.act_signed),
        act_symmetric=get_bool(m, "act_symmetric", where, d.act_symmetric),
        calibration=get_enum(m, "calibration", where, CALIBRATIONS, d.calibration),
        percentile=get_float(m, "percentile", where, d.percentile, "a number in (50, 100]",
                             lambda x: 50 < x <= 100),
        rounding=Rounding(get_enum(m, "rounding", where, ROUNDINGS, d.rounding)),
        multiplier_bits=get_int(m, "multiplier_bits", where, d.multiplier_bits, 8, 32),
        bias_bits=get_int(m, "bias_bits", where, d.bias_bits, 8, 32),
        max_acc_bits=get_int(m, "max_acc_bits", where, d.max_acc_bits, 16, 56),
        fuse_across_qdq=get_bool(m, "fuse_across_qdq", where, d.fuse_across_qdq),
        input=_parse_input(m["input"], where.child("input")) if m.get("input") is not None else None,
    )


def _parse_input(section: Any, where: Where) -> InputQuant:
    m = as_mapping(section, where, "a mapping such as {scale: 0.0078125, zero_point: 0} or {min: -1, max: 1}")
    m = {k: v for k, v in m.items() if v is not None}  # to_dict() writes the unused form as nulls
    check_keys(m, InputQuant.__dataclass_fields__, where)
    d = InputQuant()
    q = InputQuant(
        bits=get_int(m, "bits", where, d.bits, *BITS_RANGE),
        signed=get_bool(m, "signed", where, d.signed),
        scale=get_float(m, "scale", where, None, "a number > 0", lambda x: x > 0),
        zero_point=get_int(m, "zero_point", where, d.zero_point, -(1 << 16), 1 << 16),
        min=get_float(m, "min", where, None),
        max=get_float(m, "max", where, None),
    )
    ranged = q.min is not None or q.max is not None
    if (q.scale is None) == (not ranged) or (ranged and (q.min is None or q.max is None)):
        raise where.error(f"{where.path} needs either scale (with zero_point) or both min and max")
    if ranged and not q.min < q.max:  # type: ignore[operator]
        raise where.error(f"{where.path}: min {q.min} must be below max {q.max}")
    lo, hi = (-(1 << (q.bits - 1)), (1 << (q.bits - 1)) - 1) if q.signed else (0, (1 << q.bits) - 1)
    if not lo <= q.zero_point <= hi:
        raise where.error(f"{where.key('zero_point')} {q.zero_point} is outside the {q.bits}-bit range [{lo}, {hi}]")
    return q


def _parse_bn(section: Any, where: Where) -> BnConfig:
    m = as_mapping(section, where)
    check_keys(m, BnConfig.__dataclass_fields__, where)
    d = BnConfig()
    return BnConfig(
        var_floor=get_float(m, "var_floor", where, d.var_floor, "a number >= 0", lambda x: x >= 0),
        floor_is_error=get_bool(m, "floor_is_error", where, d.floor_is_error),
    )


def _parse_layers(section: Any, where: Where) -> Mapping[str, LayerOverride]:
    m = as_mapping(section, where, "a mapping from layer name to settings")
    out: dict[str, LayerOverride] = {}
    for name, value in m.items():
        if not isinstance(name, str):
            raise where.error(f"layer names under {where.path} must be strings, got {name!r}")
        at = where.child(name)
        entry = as_mapping(value, at, "a mapping such as {weight_bits: 4}")
        check_keys(entry, LayerOverride.__dataclass_fields__, at)
        bits = {k: check_int(v, at.key(k), at, *BITS_RANGE) for k, v in entry.items()}
        out[name] = LayerOverride(**bits)
    return MappingProxyType(out)


def parse_limits(section: Any, where: Any) -> Limits:
    """The `limits:` section of a config (`where` names its place)."""
    m: Mapping[str, Any] = as_mapping(section, where)
    check_keys(m, LIMIT_KEYS, where)
    d = DEFAULT_LIMITS
    return Limits(**{k: get_int(m, k, where, getattr(d, k), lo=1) for k in LIMIT_KEYS})
