# SPDX-License-Identifier: MIT
"""The class ids of the label contract, read from common/taxonomy.c.

The corpus scripts check labels against the classifier's own table, so a
class added to or renamed in the taxonomy cannot leave them behind."""
import os
import re
import sys

TAXONOMY_C = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "..", "common", "taxonomy.c")


def class_ids(path=TAXONOMY_C):
    with open(path) as f:
        ids = re.findall(r'\[GA_CLASS_[A-Z_]+\]\s*=\s*\{"([a-z_]+)"', f.read())
    if not ids:
        sys.exit("no class ids found in %s" % path)
    return set(ids)
