"""The bottom layer, used by every other: what any command needs whatever it computes.

    cache.py        the bounded build caches ($HLSGEN_CACHE) and `hlsgen cache`
    outdir.py       the OUT folder, written atomically, replaced only when hlsgen wrote it
    outfile.py      files at a path the user names, never over an input or a file hlsgen did not write
    progress.py     progress on stderr (rich, plain, quiet) and the estimates of builds and runs
    identifiers.py  names from the model made safe for C++, Verilog, file names and text
    names.py        Namer: one unique generated identifier per model name
"""
