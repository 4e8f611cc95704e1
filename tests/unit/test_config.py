"""hlsgen.config.compile: defaults, strict checking with one-line messages, per-layer overrides, merging."""

from __future__ import annotations

from pathlib import Path

import pytest

from hlsgen.config.compile import Config, LayerOverride, config_from_dict, load_config, merge_under
from hlsgen.errors import HlsgenError


def write(tmp_path: Path, text: str, name: str = "cfg.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def error_of(tmp_path: Path, text: str) -> str:
    with pytest.raises(HlsgenError) as info:
        load_config(write(tmp_path, text))
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(str(tmp_path / "cfg.yaml") + ": ")
    return message


def test_defaults() -> None:
    cfg = load_config(None)
    q = cfg.quant
    assert (q.weight_bits, q.act_bits, q.act_signed, q.act_symmetric) == (8, 8, True, False)
    assert (q.calibration, q.percentile, q.rounding) == ("minmax", 99.99, "half_even")
    assert (q.multiplier_bits, q.bias_bits, q.max_acc_bits) == (16, 32, 48)
    assert (cfg.bn.var_floor, cfg.bn.floor_is_error) == (1e-4, False)
    assert dict(cfg.layers) == {}
    assert cfg == Config()


def test_empty_file_and_empty_sections_are_defaults(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, "")).quant == Config().quant
    cfg = load_config(write(tmp_path, "quant:\nbn:\nlayers:\n"))
    assert cfg.to_dict() == Config().to_dict()


def test_full_file(tmp_path: Path) -> None:
    text = """
quant:
  weight_bits: 4
  act_bits: 6
  act_signed: false
  act_symmetric: true
  calibration: percentile
  percentile: 99.9
  rounding: half_up
  multiplier_bits: 24
  bias_bits: 24
  max_acc_bits: 32
bn: {var_floor: 1e-3, floor_is_error: true}
"""
    cfg = load_config(write(tmp_path, text))
    assert cfg.quant.weight_bits == 4 and cfg.quant.act_bits == 6
    assert cfg.quant.act_signed is False and cfg.quant.act_symmetric is True
    assert cfg.quant.calibration == "percentile" and cfg.quant.percentile == 99.9
    assert cfg.quant.rounding == "half_up"
    assert (cfg.quant.multiplier_bits, cfg.quant.bias_bits, cfg.quant.max_acc_bits) == (24, 24, 32)
    assert cfg.bn.var_floor == 1e-3 and cfg.bn.floor_is_error is True  # '1e-3' text is accepted
    assert cfg.source == str(tmp_path / "cfg.yaml")


def test_per_layer_overrides(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, "quant: {weight_bits: 6}\nlayers:\n  conv1: {weight_bits: 4}\n"
                                      "  fc: {act_bits: 16, weight_bits: 8}\n"))
    assert cfg.layers["conv1"] == LayerOverride(weight_bits=4)
    assert cfg.weight_bits("conv1") == 4 and cfg.act_bits("conv1") == 8
    assert cfg.weight_bits("fc") == 8 and cfg.act_bits("fc") == 16
    assert cfg.weight_bits("other") == 6
    assert cfg.to_dict()["layers"] == {"conv1": {"weight_bits": 4}, "fc": {"weight_bits": 8, "act_bits": 16}}
    cfg.check_layer_names(["conv1", "fc", "x"])
    expected = r"'layers.conv1' names no layer of the model \(did you mean 'conv_1'"
    with pytest.raises(HlsgenError, match=expected):
        cfg.check_layer_names(["conv_1", "fc"])


def test_to_dict_round_trips() -> None:
    d = {"quant": {"weight_bits": 4, "rounding": "half_up"}, "bn": {"var_floor": 0.0},
         "layers": {"a": {"act_bits": 4}}}
    cfg = config_from_dict(d, "mem")
    assert config_from_dict(cfg.to_dict(), "again") == cfg
    assert cfg.to_dict()["quant"]["percentile"] == 99.99


def test_unknown_key_suggests_nearest(tmp_path: Path) -> None:
    msg = error_of(tmp_path, "quant:\n  weigth_bits: 4\n")
    assert msg.endswith("unknown key 'quant.weigth_bits' (did you mean 'weight_bits'?)")
    assert "did you mean" not in error_of(tmp_path, "quant:\n  zzz: 1\n")
    assert "unknown key 'qaunt' (did you mean 'quant'?)" in error_of(tmp_path, "qaunt: {}\n")
    assert "unknown key 'hls'" in error_of(tmp_path, "hls: {}\n")
    assert "unknown key 'layers.c1.wbits'" in error_of(tmp_path, "layers: {c1: {wbits: 4}}\n")


@pytest.mark.parametrize(("text", "expected"), [
    ("quant: {weight_bits: eight}", "quant.weight_bits must be an integer 2..16, got 'eight'"),
    ("quant: {weight_bits: true}", "quant.weight_bits must be an integer 2..16, got True"),
    ("quant: {act_bits: 8.0}", "quant.act_bits must be an integer 2..16, got 8.0"),
    ("quant: {act_signed: 1}", "quant.act_signed must be true or false, got 1"),
    ("quant: {percentile: high}", "quant.percentile must be a number in (50, 100], got 'high'"),
    ("bn: {var_floor: .nan}", "bn.var_floor must be a number >= 0, got nan"),
    ("bn: {floor_is_error: 'no'}", "bn.floor_is_error must be true or false, got 'no'"),
    ("layers: {c1: {act_bits: x}}", "layers.c1.act_bits must be an integer 2..16, got 'x'"),
    ("quant: 8", "quant must be a mapping (key: value lines), got 8"),
    ("layers: {c1: 4}", "layers.c1 must be a mapping such as {weight_bits: 4}"),
    ("layers: [c1]", "layers must be a mapping from layer name to settings"),
])
def test_wrong_types(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in error_of(tmp_path, text + "\n")


@pytest.mark.parametrize(("text", "expected"), [
    ("quant: {weight_bits: 1}", "quant.weight_bits must be an integer 2..16, got 1"),
    ("quant: {act_bits: 17}", "quant.act_bits must be an integer 2..16, got 17"),
    ("quant: {multiplier_bits: 33}", "quant.multiplier_bits must be an integer 8..32, got 33"),
    ("quant: {bias_bits: 7}", "quant.bias_bits must be an integer 8..32, got 7"),
    ("quant: {max_acc_bits: 60}", "quant.max_acc_bits must be an integer 16..56, got 60"),
    ("quant: {percentile: 50}", "quant.percentile must be a number in (50, 100], got 50"),
    ("quant: {percentile: 100.5}", "quant.percentile must be a number in (50, 100], got 100.5"),
    ("bn: {var_floor: -1.0}", "bn.var_floor must be a number >= 0, got -1.0"),
    ("layers: {c1: {weight_bits: 32}}", "layers.c1.weight_bits must be an integer 2..16, got 32"),
])
def test_out_of_range(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in error_of(tmp_path, text + "\n")


def test_bad_enum_lists_choices(tmp_path: Path) -> None:
    msg = error_of(tmp_path, "quant: {calibration: max}\n")
    assert "quant.calibration must be one of minmax, percentile; got 'max'" in msg
    msg = error_of(tmp_path, "quant: {rounding: even}\n")
    assert "quant.rounding must be one of half_even, half_up; got 'even' (did you mean 'half_even'?)" in msg


def test_yaml_syntax_error_names_line(tmp_path: Path) -> None:
    msg = error_of(tmp_path, "quant:\n  weight_bits: 4\n  act_bits: [8\n")
    assert "YAML syntax error at line 4" in msg
    msg = error_of(tmp_path, "quant:\n  act_bits: 4: 5\n")
    assert "YAML syntax error at line 2" in msg


def test_duplicate_keys_are_errors(tmp_path: Path) -> None:
    msg = error_of(tmp_path, "layers:\n  c1: {weight_bits: 4}\n  c1: {weight_bits: 6}\n")
    assert "YAML syntax error at line 3, column 3: duplicate key 'c1'" in msg


def test_not_a_mapping(tmp_path: Path) -> None:
    assert "must be a mapping (key: value lines) at the top level, got a list" in error_of(tmp_path, "- 1\n")
    assert "got 'hello'" in error_of(tmp_path, "hello\n")


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    with pytest.raises(HlsgenError, match=r"nope\.yaml: config file not found$"):
        load_config(path)


def test_config_from_dict_names_source() -> None:
    with pytest.raises(HlsgenError, match=r"^inline: unknown key 'bn.floor' \(did you mean 'var_floor'"):
        config_from_dict({"bn": {"floor": 1}}, "inline")


def test_base_sections_are_overridden_key_by_key(tmp_path: Path) -> None:
    base = {"quant": {"weight_bits": 4, "act_bits": 4}}
    cfg = load_config(write(tmp_path, "quant: {act_bits: 6}\n"), base=base)
    assert (cfg.quant.weight_bits, cfg.quant.act_bits) == (4, 6)
    assert load_config(None, base=base).quant.act_bits == 4
    assert merge_under({"a": {"b": 1, "c": 2}}, {"a": {"c": 3}, "d": 4}) == {"a": {"b": 1, "c": 3}, "d": 4}


@pytest.mark.parametrize("top", ["module", "main", "int", "proc", "exec", "lambda", "endmodule", "always_ff",
                                 "ap_top", "hg_fifo", "Module", "hlsgen", "9top", "top-1", "a\\nb", "x" * 65])
def test_hw_top_refuses_keywords_and_non_identifiers(tmp_path: Path, top: str) -> None:
    assert "hw.top" in error_of(tmp_path, f"hw: {{top: '{top}'}}\n")


@pytest.mark.parametrize("part", ["xc7z020clg400-1\nexec touch X", "xc7z020 [exec id]", "xc7;ls", "$part", ""])
def test_hw_part_cannot_carry_tcl(tmp_path: Path, part: str) -> None:
    assert "hw.hls.part" in error_of(tmp_path, f"hw: {{hls: {{part: {part!r}}}}}\n".replace("\\n", "\\\\n"))


@pytest.mark.parametrize("part", ["xc7z020clg400-1", "xczu7ev-ffvc1156-2-e", "xcu250-figd2104-2L-e", "xc7a35tcpg236-1"])
def test_real_part_names_pass(tmp_path: Path, part: str) -> None:
    assert load_config(write(tmp_path, f"hw: {{hls: {{part: {part}}}}}\n")).hw.hls.part == part


def test_hw_part_is_the_device_for_folding_and_the_hls_scripts(tmp_path: Path) -> None:
    hw = load_config(write(tmp_path, "hw: {part: xc7a35tcpg236-1}\n")).hw
    assert hw.part == hw.hls.part == "xc7a35tcpg236-1"
    assert load_config(write(tmp_path, "hw: {hls: {part: xczu3eg-sbva484-1-e}}\n")).hw.part == "xczu3eg-sbva484-1-e"
    assert "differ" in error_of(tmp_path, "hw: {part: xc7a35tcpg236-1, hls: {part: xczu3eg-sbva484-1-e}}\n")
    assert "known devices" in error_of(tmp_path, "hw: {part: xc7k325tffg900-2}\n")
    unknown = "hw: {part: xc7k325tffg900-2, budget: {dsp: 840, lut: 203800, bram36: 445}}\n"
    assert load_config(write(tmp_path, unknown)).hw.budget.dsp == 840  # a full budget makes any part usable


def test_hw_budget_and_target_fps_are_checked(tmp_path: Path) -> None:
    assert "hw.budget.dsp" in error_of(tmp_path, "hw: {budget: {dsp: -1}}\n")
    assert "hw.budget" in error_of(tmp_path, "hw: {budget: {dsps: 10}}\n")
    assert "hw.target_fps" in error_of(tmp_path, "hw: {target_fps: fast}\n")
    assert load_config(write(tmp_path, "hw: {target_fps: 2500}\n")).hw.target_fps == 2500


def test_quant_input_forms(tmp_path: Path) -> None:
    fixed = load_config(write(tmp_path, "quant: {input: {bits: 8, signed: true, scale: 0.0078125, zero_point: 0}}\n"))
    assert fixed.quant.input is not None and fixed.quant.input.scale == 0.0078125
    ranged = load_config(write(tmp_path, "quant: {input: {min: -1.0, max: 1.0}}\n"))
    assert ranged.quant.input is not None and (ranged.quant.input.min, ranged.quant.input.max) == (-1.0, 1.0)
    assert load_config(None).quant.input is None


@pytest.mark.parametrize(("text", "expected"), [
    ("quant: {input: {bits: 8}}", "quant.input needs either scale (with zero_point) or both min and max"),
    ("quant: {input: {min: 0}}", "quant.input needs either scale (with zero_point) or both min and max"),
    ("quant: {input: {scale: 0.1, min: 0, max: 1}}", "quant.input needs either scale"),
    ("quant: {input: {min: 1, max: 0}}", "quant.input: min 1.0 must be below max 0.0"),
    ("quant: {input: {scale: -0.1}}", "quant.input.scale must be a number > 0"),
    ("quant: {input: {scale: 0.1, zero_point: 300}}", "quant.input.zero_point 300 is outside the 8-bit range"),
    ("quant: {input: {scale: 0.1, signed: false, zero_point: -1}}", "outside the 8-bit range [0, 255]"),
    ("quant: {input: {scale: 0.1, zeropoint: 1}}", "did you mean 'zero_point'"),
])
def test_quant_input_errors(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in error_of(tmp_path, text + "\n")


def test_quant_input_round_trips() -> None:
    cfg = config_from_dict({"quant": {"input": {"min": -1.0, "max": 3.0, "bits": 6, "signed": False}}}, "x")
    assert config_from_dict(cfg.to_dict(), "again") == cfg
