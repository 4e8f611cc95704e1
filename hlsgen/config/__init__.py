"""The compile configuration, validated once, and the schema every YAML reader of hlsgen uses.

    compile.py  Config: the `-c CONFIG` file (quant, layers, bn, limits, hw), config_from_dict, load_config
    hw.py       HwConfig: the `hw:` section (part, budget, folding, HLS and RTL options)
    limits.py   Limits: the resource limits of untrusted inputs
    schema.py   typed getters with one-line errors naming the key (Where, get_int, check_keys, ...)
"""
