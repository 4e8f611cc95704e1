"""What a compile reports and writes: report.json/md, report.html with its plots, the OUT folder.

    summary.py   build_report, render_markdown: the facts of report.json and report.md
    html.py      OUT/report.html (self-contained; `python -m hlsgen.report.html OUT` refreshes it)
    plots.py     the SVG plots of report.html (matplotlib, Agg)
    describe.py  `hlsgen inspect`: what the model holds and what each part becomes
    output.py    write_compilation: the whole OUT folder, atomically
"""
