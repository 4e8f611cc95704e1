"""Words that a generated identifier must never be: the keywords of every language hlsgen writes
(C++, Verilog/SystemVerilog, Tcl, Python), names the generated code itself defines, and prefixes of
the vendor libraries. Used by the identifier namer (backends/names.py) and by the config (`hw.top`).
"""

from __future__ import annotations

import keyword
import re

CPP = frozenset("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t class
compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield decltype
default delete do double dynamic_cast else enum explicit export extern false float for friend goto if inline
int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public
register reinterpret_cast requires return short signed sizeof static static_assert static_cast struct
switch template this thread_local throw true try typedef typeid typename union unsigned using virtual void
volatile wchar_t while xor xor_eq main NULL assert std size_t int8_t int16_t int32_t int64_t uint8_t
uint16_t uint32_t uint64_t
""".split())

SYSTEMVERILOG = frozenset("""
accept_on alias always always_comb always_ff always_latch and assert assign assume automatic before begin
bind bins binsof bit break buf bufif0 bufif1 byte case casex casez cell chandle checker class clocking cmos
config const constraint context continue cover covergroup coverpoint cross deassign default defparam design
disable dist do edge else end endcase endchecker endclass endclocking endconfig endfunction endgenerate
endgroup endinterface endmodule endpackage endprimitive endprogram endproperty endspecify endsequence
endtable endtask enum event eventually expect export extends extern final first_match for force foreach
forever fork forkjoin function generate genvar global highz0 highz1 if iff ifnone ignore_bins illegal_bins
implements implies import incdir include initial inout input inside instance int integer interconnect
interface intersect join join_any join_none large let liblist library local localparam logic longint
macromodule matches medium modport module nand negedge nettype new nexttime nmos nor noshowcancelled not
notif0 notif1 null or output package packed parameter pmos posedge primitive priority program property
protected pull0 pull1 pulldown pullup pulsestyle_ondetect pulsestyle_onevent pure rand randc randcase
randsequence rcmos real realtime ref reg reject_on release repeat restrict return rnmos rpmos rtran
rtranif0 rtranif1 s_always s_eventually s_nexttime s_until s_until_with scalared sequence shortint
shortreal showcancelled signed small soft solve specify specparam static string strong strong0 strong1
struct super supply0 supply1 sync_accept_on sync_reject_on table tagged task this throughout time
timeprecision timeunit tran tranif0 tranif1 tri tri0 tri1 triand trior trireg type typedef union unique
unique0 unsigned until until_with untyped use uwire var vectored virtual void wait wait_order wand weak
weak0 weak1 while wildcard wire with within wor xnor xor
""".split())

TCL = frozenset("""
after append apply array binary break catch cd chan clock close concat continue dict encoding eof error
eval exec exit expr fblocked fconfigure fcopy file fileevent flush for foreach format gets glob global if
incr info interp join lappend lassign lindex linsert list llength lmap load lrange lrepeat lreplace
lreverse lsearch lset lsort namespace open package pid proc puts pwd read regexp regsub rename return scan
seek set socket source split string subst switch tell time trace unset update uplevel upvar variable vwait
while
""".split())

PYTHON = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | {"cocotb", "hlsgen_tb"}

# names the generated code defines itself (kernel namespace, tap namespace, stream ports, clocks)
GENERATED = frozenset("hlsgen hlsgen_tap in out in_r out_r clk rst_n ap_clk ap_rst_n".split())

RESERVED = CPP | SYSTEMVERILOG | TCL | PYTHON | GENERATED
RESERVED_PREFIXES = ("ap_", "hls_", "hg_", "xil_", "__")
IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}\Z")


def identifier_problem(name: str) -> str | None:
    """Why `name` cannot be a top-level identifier in generated code, or None when it can."""
    if not IDENTIFIER.match(name):
        return "must be a letter followed by up to 63 letters, digits or underscores"
    if name in RESERVED or name.lower() in RESERVED:
        return "is a reserved word of C++, Verilog/SystemVerilog, Tcl or Python"
    if name.lower().startswith(RESERVED_PREFIXES):
        return f"must not start with {', '.join(RESERVED_PREFIXES)} (vendor and hlsgen names)"
    return None

_PLAIN = re.compile(r"[!#-~][ !#-~]*\Z")  # printable ASCII without a double quote, not starting with a space


def shown(name: str) -> str:
    """A source name as text for a dump, a report or the terminal: as it is when it is plain
    printable ASCII, otherwise a JSON string (quoted, with escapes), so that it stays on one line
    and cannot carry terminal control sequences."""
    import json

    return name if _PLAIN.match(name) else json.dumps(name)
