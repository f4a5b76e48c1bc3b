"""The main() of a benchmark section run on its own (whatifbench.py,
whatifpg.py): root checked, the section run, its figures written to
--json when asked."""
import argparse
import json
import os
import sys


def section_main(doc, name, needs, section):
    """Runs section(results) as the command name, whose doc's first line
    is its description; needs says why it needs root."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print(f"{name} needs root ({needs})", file=sys.stderr)
        return 1
    results = {}
    section(results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0
