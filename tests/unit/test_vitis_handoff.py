"""The Vitis hand-off without a vendor tool (issue 10 item 3): `hw.tlast` and `hw.hls.tool` in the config,
the test vectors handed to the testbench through hls_config.cfg (tb.file + csim.argv/cosim.argv) and
run_hls.tcl (add_files -tb + -argv), both entry points of the Tcl flow, TLAST in the HLS top and the
Verilog top, OUT/hls/README.md, and the 4096-bit beat guard at `hlsgen compile`. Compiling and running
the generated code (g++, Verilator) is tests/sim/test_tlast.py."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from tlast_net import LAST_BITS, NET, OUT_BEATS, OUT_BITS

from hlsgen.cli import main
from hlsgen.config.compile import config_from_dict
from hlsgen.errors import HlsgenError
from hlsgen.pipeline import compile_model
from hlsgen.report.output import write_compilation


def _compile(tmp_path: Path, hw: dict[str, Any], name: str = "out") -> Path:
    (tmp_path / "net.yaml").write_text(NET)
    c = compile_model(tmp_path / "net.yaml", config_from_dict({"hw": hw}, "test"))
    out, _ = write_compilation(c, tmp_path / name)
    return out


@pytest.fixture(scope="module")
def tlast(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _compile(tmp_path_factory.mktemp("tlast"), {"tlast": True})


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _compile(tmp_path_factory.mktemp("plain"), {})


# ---- configuration ---------------------------------------------------------------------------------------------


def test_config_defaults_and_values() -> None:
    d = config_from_dict({}, "t").hw
    assert d.tlast is False and d.hls.tool == "vitis"
    c = config_from_dict({"hw": {"tlast": True, "hls": {"tool": "vivado"}}}, "t").hw
    assert c.tlast is True and c.hls.tool == "vivado"
    assert c.to_dict()["tlast"] is True and c.to_dict()["hls"]["tool"] == "vivado"


@pytest.mark.parametrize(("hw", "message"), [
    ({"tlast": "yes"}, r"hw\.tlast must be true or false, got 'yes'"),
    ({"tlast": 1}, r"hw\.tlast must be true or false"),
    ({"hls": {"tool": "vivdo"}}, r"hw\.hls\.tool must be one of vitis, vivado; got 'vivdo'"),
    ({"tlast_": True}, r"tlast_"),
])
def test_config_errors(hw: dict[str, Any], message: str) -> None:
    with pytest.raises(HlsgenError, match=message) as e:
        config_from_dict({"hw": hw}, "t")
    assert "\n" not in str(e.value)


# ---- test vectors through the scripts ----------------------------------------------------------------------------


def _cfg(hls: Path) -> list[tuple[str, str]]:
    return [tuple(line.split("=", 1)) for line in (hls / "hls_config.cfg").read_text().splitlines()  # type: ignore[misc]
            if "=" in line and not line.startswith("#")]


def test_cfg_hands_the_vectors_to_the_testbench(plain: Path) -> None:
    hls = plain / "hls"
    cfg = _cfg(hls)
    tb_files = [v for k, v in cfg if k == "tb.file"]
    assert tb_files == ["tb/tb_main.cpp", "../vectors"]
    # relative to the cfg's folder: the testbench source and the vectors folder hlsgen compile wrote
    assert (hls / tb_files[0]).is_file() and (hls / tb_files[1] / "meta.json").is_file()
    assert ("csim.argv", "vectors") in cfg and ("cosim.argv", "vectors") in cfg
    assert Path(tb_files[1]).name == "vectors"  # the tool copies it under this name beside the binary
    assert ("syn.file", "src/top.cpp") in cfg and ("syn.top", "hlsgen_top") in cfg


def test_tcl_hands_the_vectors_to_the_testbench(plain: Path) -> None:
    tcl = (plain / "hls" / "run_hls.tcl").read_text()
    assert "add_files -tb [file join $here .. vectors]" in tcl
    assert "csim_design -argv vectors" in tcl and "cosim_design -argv vectors" in tcl
    assert "set here [file dirname [file normalize [info script]]]" in tcl
    # the entry points named in the script and the README, and the step selection for each
    for line in ("vitis-run --mode hls --tcl run_hls.tcl", "vitis_hls -f run_hls.tcl", "vivado_hls -f run_hls.tcl",
                 "HLSGEN_STEPS"):
        assert line in tcl
    assert "-std=c++0x" not in tcl and "-cflags" not in tcl  # Vitis HLS: its default standard


def test_testbench_reads_the_folder_from_argv(plain: Path) -> None:
    main_cpp = (plain / "hls" / "tb" / "tb_main.cpp").read_text()
    util = (plain / "hls" / "tb" / "tb_util.h").read_text()
    assert "find_vectors(argc, argv)" in main_cpp
    assert "argv[1]" in util and '"../"' not in util  # the folder the scripts name, never a parent's


def test_readme_walks_through_both_entry_points(tlast: Path) -> None:
    readme = (tlast / "hls" / "README.md").read_text()
    commands = [line.strip() for line in readme.splitlines() if line.startswith("    ")]
    for want in ("hlsgen csim <OUT>",
                 "vitis-run --mode hls --csim --config hls_config.cfg --work_dir hlsgen_top_component",
                 "v++ -c --mode hls --config hls_config.cfg --work_dir hlsgen_top_component",
                 "vitis-run --mode hls --cosim --config hls_config.cfg --work_dir hlsgen_top_component",
                 "vitis-run --mode hls --package --config hls_config.cfg --work_dir hlsgen_top_component",
                 "vitis-run --mode hls --tcl run_hls.tcl", "vitis_hls -f run_hls.tcl",
                 "vitis_hls -f run_hls.tcl -tclargs csim", "vivado_hls -f run_hls.tcl", "./csim ../vectors"):
        assert any(c.startswith(want) for c in commands), want
    assert f"TLAST is 1 on beat {OUT_BEATS} of every frame" in readme
    assert "csim.argv=vectors" in readme and "-std=c++0x" in readme


# ---- TLAST in the HLS top ---------------------------------------------------------------------------------------


def test_hls_top_with_tlast(tlast: Path) -> None:
    src = tlast / "hls" / "src"
    top_h, top = (src / "top.h").read_text(), (src / "top.cpp").read_text()
    assert f"typedef hlsgen::axis_beat<{OUT_BITS}>::type hlsgen_top_out_t;" in top_h
    assert '#include "hlsgen_axis.h"' in top_h and (src / "hlsgen_axis.h").is_file()
    assert f"hlsgen::axis_last<{OUT_BEATS}, {OUT_BITS}>(s_out_axis, out);" in top
    assert "#pragma HLS STREAM variable=s_out_axis depth=2" in top
    assert top.index("hlsgen::axis_last") > top.rindex("hlsgen::mvu")  # the dataflow's last process
    axis = (src / "hlsgen_axis.h").read_text()
    assert "typedef ap_axiu<W, 0, 0, 0> type;" in axis and "beat.last = i == BEATS - 1;" in axis
    glue = (tlast / "hls" / "tb" / "tb_glue.h").read_text()
    assert f"check_side_channels<{OUT_BITS}>(out, out_data, {OUT_BEATS}, frame" in glue


def test_hls_top_without_tlast(plain: Path) -> None:
    src = plain / "hls" / "src"
    assert f"typedef ap_uint<{OUT_BITS}> hlsgen_top_out_t;" in (src / "top.h").read_text()
    assert not (src / "hlsgen_axis.h").exists() and "axis_last" not in (src / "top.cpp").read_text()
    assert "check_side_channels" not in (plain / "hls" / "tb" / "tb_glue.h").read_text()


def test_vivado_tool(tmp_path: Path) -> None:
    out = _compile(tmp_path, {"tlast": True, "hls": {"tool": "vivado"}})
    hls = out / "hls"
    tcl, top = (hls / "run_hls.tcl").read_text(), (hls / "src" / "top.cpp").read_text()
    assert 'add_files [file join $here src top.cpp] -cflags "-std=c++0x"' in tcl
    assert 'add_files -tb [file join $here tb tb_main.cpp] -cflags "-std=c++0x"' in tcl
    assert "#define HLSGEN_VIVADO_HLS 1" in (hls / "src" / "top.h").read_text()
    assert "BIND_STORAGE" not in top and re.search(r"#pragma HLS RESOURCE variable=\w+ core=ROM_1P_(LUTRAM|BRAM)", top)
    plain = _compile(tmp_path, {}, "vitis")
    assert "RESOURCE" not in (plain / "hls" / "src" / "top.cpp").read_text()
    assert "#pragma HLS BIND_STORAGE" in (plain / "hls" / "src" / "top.cpp").read_text()


# ---- TLAST in the Verilog top ------------------------------------------------------------------------------------


def test_verilog_top_with_tlast(tlast: Path, plain: Path) -> None:
    sv = (tlast / "rtl" / "hlsgen_top.sv").read_text()
    for port in (r"logic \[7:0\] out_r_TKEEP", r"logic \[7:0\] out_r_TSTRB", r"output logic\s+out_r_TLAST"):
        assert re.search(port, sv), port
    assert f"assign out_r_TLAST = out_beat == {LAST_BITS}'d{OUT_BEATS - 1};" in sv
    assert "TLAST" not in (plain / "rtl" / "hlsgen_top.sv").read_text()
    test = (tlast / "tb" / "test_hlsgen_top.py").read_text()
    assert f"OUT_BEATS = {OUT_BEATS}" in test and "TlastMonitor" in test
    assert "TlastMonitor" not in (plain / "tb" / "test_hlsgen_top.py").read_text()


def test_one_beat_frames_assert_tlast_on_every_beat(tmp_path: Path) -> None:
    (tmp_path / "mlp.yaml").write_text("""
name: mlp
input: {name: x, shape: [16]}
layers:
  - {name: fc1, op: dense, units: 8, activation: relu}
""")
    c = compile_model(tmp_path / "mlp.yaml", config_from_dict({"hw": {"tlast": True}}, "t"))
    out, _ = write_compilation(c, tmp_path / "out")
    assert "assign out_r_TLAST = out_beat == 1'd0;" in (out / "rtl" / "hlsgen_top.sv").read_text()
    assert "hlsgen::axis_last<1, 64>(s_out_axis, out);" in (out / "hls" / "src" / "top.cpp").read_text()


# ---- the 4096-bit beat guard ----------------------------------------------------------------------------------------


def _wide(tmp_path: Path, channels: int, hw: dict | None = None) -> list[str]:
    (tmp_path / "wide.yaml").write_text(f"""
name: wide
input: {{name: x, shape: [4, 3, 3]}}
layers:
  - {{name: c1, op: conv, filters: {channels}, kernel: 1}}
  - {{name: c2, op: conv, filters: 4, kernel: 1}}
""")
    cfg = {"rtl": {"enabled": False}, "tlast": True, **(hw or {})}
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump({"hw": cfg}))
    return ["compile", str(tmp_path / "wide.yaml"), "-c", str(tmp_path / "cfg.yaml"), "-o", str(tmp_path / "out")]


def test_pixels_over_4096_bits_are_folded(tmp_path: Path) -> None:
    """513 x 8-bit channels: c1's stream is folded (docs/streams.md); no HLS stream over 4096 bits."""
    assert main(_wide(tmp_path, 513)) == 0
    top = (tmp_path / "out" / "hls" / "src" / "top.cpp").read_text()
    widths = [int(w) for w in re.findall(r"hls::stream<ap_uint<(\d+)> >", top)]
    assert widths and max(widths) <= 4096 and "hlsgen::join<" in top + "hlsgen::split<"


def test_a_forced_wide_port_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """hw.io_bits 0 keeps whole pixels at the ports: a 513-channel output pixel is refused in one line."""
    (tmp_path / "wide.yaml").write_text("""
name: wide
input: {name: x, shape: [4, 3, 3]}
layers:
  - {name: c1, op: conv, filters: 513, kernel: 1}
""")
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump({"hw": {"rtl": {"enabled": False}, "io_bits": 0}}))
    assert main(["compile", str(tmp_path / "wide.yaml"), "-c", str(tmp_path / "cfg.yaml"), "-o",
                 str(tmp_path / "out")]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("hlsgen:")]
    assert len(err) == 1
    assert re.fullmatch(r"hlsgen: error: HLS: stream c1\S* \(read by the output port\) has 4104-bit beats "
                        r"\(513 channels x 8 bits\), over Vitis's 4096-bit limit "
                        r"\(hw\.hls\.enabled: false skips the HLS backend\)",
                        err[0])
    assert not (tmp_path / "out" / "hls").exists()


def test_beats_of_exactly_4096_bits_are_accepted(tmp_path: Path) -> None:
    assert main(_wide(tmp_path, 512)) == 0
    top = (tmp_path / "out" / "hls" / "src" / "top.cpp").read_text()
    assert "hls::stream<ap_uint<4096> >" in top
