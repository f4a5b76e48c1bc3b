"""The report's columns as the one column model declares them, read from
its source (user/**/columns.{c,h}, wherever the folder is): each column's
id, title, short title (a narrow screen's) and one-line description.
The enum, the titles and the descriptions must name the same columns,
so a column added to one and not the others fails here."""
import os
import re

from harness import ROOT


def _find(name):
    for folder, _, files in os.walk(os.path.join(ROOT, "user")):
        if name in files:
            return os.path.join(folder, name)
    raise AssertionError(f"no {name} under user/")


def columns():
    """[(id, title, short title or None, description)] in the enum's
    order, and the sort mark's description."""
    with open(_find("columns.h")) as f:
        header = f.read()
    with open(_find("columns.c")) as f:
        source = f.read()
    enum = re.search(r"enum column_id \{(.*?)COL__COUNT", header, re.S).group(1)
    ids = re.findall(r"^\s*(COL_[A-Z_]+)\b", enum, re.M)
    titles = dict((m[0], (m[1], None if m[2] == "NULL" else m[2].strip('"')))
                  for m in re.findall(
                      r'\[(COL_\w+)\] = \{ "([^"]+)", \d+, (?:true|false), '
                      r'(NULL|"[^"]*") \}', source))
    about = dict(re.findall(r'^\s*\[(COL_\w+)\] = "([^"]*)",$', source, re.M))
    mark = re.search(r'cols_mark_about\[\] =\s*"([^"]*)";', source).group(1)
    assert ids and set(ids) == set(titles) == set(about), (ids, titles, about)
    return [(i, titles[i][0], titles[i][1], about[i]) for i in ids], mark


def help_lines():
    """Each column's help line, as --help, the man page and the live
    screen's ? write it ("  Title[, Short]  description"), the sort
    mark's last."""
    cols, mark = columns()
    out = []
    for _, title, short, about in cols:
        titles = f"{title}, {short}" if short and short != title else title
        out.append((titles, about))
    out.append(("*", mark))
    return out
