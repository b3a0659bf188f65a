"""Workload of benchmarks/lark.py: grammars and the documents walked through them.

- The shipped grammars (grammars/*.lark) with documents written for them here; the JSON grammar
  walks the valid instances of ../shared/data/jsonschemabench-tests (pretty-printed, so that
  whitespace between tokens is exercised too). SQL once more, measured after its five queries
  (`warm/sql`): 20 more queries, the steady state of a grammar that has served a few requests.
- The grammars of ../shared/data/lark-grammars that Lark loads, with documents made by seeded
  random walks under our own masks (on a Compiler of its own, so the measured one starts cold)
  and kept only where Lark's parser accepts them; walks stay short and steer to an end.
"""

from __future__ import annotations

import csv
import json
import random
from dataclasses import dataclass
from typing import Optional

import numpy as np

if __package__:  # constrain.benchmarks, installed
    from .data_dir import data_dir
else:  # imported by name from a script in benchmarks/
    from data_dir import data_dir

DATA = data_dir()
LARK_DATA = DATA / "lark-grammars"


@dataclass
class Case:
    name: str
    text: str
    start: str = "start"
    folder: Optional[str] = None  # for relative %import
    docs: Optional[list[str]] = None  # documents as text (tokenized by the benchmark), or
    walks: Optional[list[list[int]]] = None  # documents as token ids
    warmup: Optional[list[str]] = None  # documents walked, unmeasured, after the compile
    peers: bool = True  # False: constrain alone (XGrammar takes about a second per SQL mask)


SHIPPED_DOCS = {
    "arithmetic": ["1 + 2 * 3", "-(a + b) ** 2 / 4.5e3 % 7", "max(1, x, f(2)) - min(y, 3.25)", "2**-1 + sqrt(x*x + y*y)",
                   "(((1)))", "f(g(h(1, 2), 3), 4) * -5"],
    "csv": ['name,age,city\nAda,36,London\n"Lovelace, A.","",Paris\n', "id,value\r\n1,3.5\r\n2,\r\n3,\"x\"\"y\"\r\n",
            "a,b,c\n1,2,3\n4,5,6\n7,8,9\n"],
    "sql": [
        "SELECT * FROM users;",
        "SELECT u.name, COUNT(*) AS n FROM users u LEFT JOIN orders o ON o.user_id = u.id "
        "WHERE u.age BETWEEN 18 AND 65 AND u.name LIKE 'A%' GROUP BY u.name HAVING COUNT(*) > 2 "
        "ORDER BY n DESC LIMIT 10 OFFSET 5;",
        "SELECT a, b FROM t WHERE b IN (SELECT b FROM s WHERE s.c = 'x') UNION ALL SELECT 1, 2;",
        "SELECT CASE WHEN price IS NOT NULL THEN price * 1.2 ELSE 0 END AS gross FROM products WHERE id = 7;",
        "SELECT DISTINCT country FROM customers WHERE NOT EXISTS (SELECT 1 FROM orders WHERE orders.cid = customers.id) ORDER BY country;",
    ],
    "python_expr": ["x if a and not b else y", "f(1, *args, key=[1, 2], **kw).attr[0:n]",
                    "lambda a, b: {'k': (a, b,), \"s\": a // b}", "not 0x1F in d is not None",
                    "sorted(items, key=lambda kv: kv[1], reverse=True)[:10]"],
    "tool_call": [
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}</tool_call>',
        '<tool_call>{"name": "search", "arguments": {"query": "constrained decoding", "limit": 5, "filters": {"year": [2024, 2025]}}}</tool_call>',
        '<tool_call>{"name":"a","arguments":{}}</tool_call>\n<tool_call>{"name": "b", "arguments": {"x": [1, null, true]}}</tool_call>',
    ],
}


# More queries over the same constructs: measured after the five above (the steady state of a
# grammar that has served a few requests: most positions' frame summaries exist by then).
SQL_MORE = [
 "SELECT id, name FROM products WHERE price > 100 ORDER BY price DESC;",
 "SELECT COUNT(*) FROM orders WHERE status = 'shipped';",
 "SELECT c.name, SUM(o.total) AS revenue FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY c.name ORDER BY revenue DESC LIMIT 5;",
 "SELECT title FROM books WHERE author_id IN (SELECT id FROM authors WHERE country = 'UK');",
 "SELECT AVG(salary) FROM employees WHERE department = 'Sales' AND hired_at >= '2020-01-01';",
 "SELECT e.name, d.name FROM employees e INNER JOIN departments d ON e.dept_id = d.id WHERE d.budget > 50000;",
 "SELECT MAX(score), MIN(score) FROM results WHERE exam_id = 3;",
 "SELECT name FROM users WHERE email LIKE '%@example.com' ORDER BY name;",
 "SELECT product_id, COUNT(*) AS n FROM reviews GROUP BY product_id HAVING n >= 10;",
 "SELECT * FROM events WHERE starts_at BETWEEN '2024-01-01' AND '2024-12-31' ORDER BY starts_at LIMIT 20;",
 "SELECT city, COUNT(DISTINCT user_id) FROM visits GROUP BY city;",
 "SELECT name, CASE WHEN age < 18 THEN 'minor' ELSE 'adult' END AS category FROM people;",
 "SELECT o.id FROM orders o WHERE NOT EXISTS (SELECT 1 FROM payments p WHERE p.order_id = o.id);",
 "SELECT name FROM students WHERE grade = 'A' UNION SELECT name FROM teachers WHERE active = 1;",
 "SELECT ROUND(AVG(rating), 2) FROM movies WHERE year > 2000 AND genre = 'drama';",
 "SELECT u.id, u.name FROM users u LEFT JOIN sessions s ON s.user_id = u.id WHERE s.id IS NULL;",
 "SELECT LOWER(name), LENGTH(name) FROM tags ORDER BY 2 DESC LIMIT 3;",
 "SELECT SUM(quantity * unit_price) FROM order_items WHERE order_id = 42;",
 "SELECT DISTINCT category FROM products WHERE stock = 0;",
 "SELECT a.name FROM artists a WHERE a.id IN (SELECT artist_id FROM albums GROUP BY artist_id HAVING COUNT(*) > 3) ORDER BY a.name;",
]


def json_documents(limit: int) -> list[str]:
    """Valid instances of the JSONSchemaBench test files, pretty-printed (indent 2)."""
    root = DATA / "jsonschemabench-tests"
    docs: list[str] = []
    for sub in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        for f in sorted(sub.iterdir())[:limit]:
            try:
                tests = json.loads(f.read_text())["tests"]
            except (ValueError, KeyError):
                continue
            for t in tests:
                if t.get("valid") and len(json.dumps(t["data"])) < 400:
                    docs.append(json.dumps(t["data"], indent=2, ensure_ascii=False))
                    break
    return docs


def shipped_cases(json_limit: int) -> list[Case]:
    from constrain.grammars import NAMES, load

    cases = []
    for name in NAMES:
        docs = json_documents(json_limit) if name == "json" else SHIPPED_DOCS[name]
        cases.append(Case(f"shipped/{name}", load(name), docs=docs))
    cases.append(Case("warm/sql (20 more)", load("sql"), docs=SQL_MORE, warmup=SHIPPED_DOCS["sql"], peers=False))
    cases.append(Case(PLAIN_NAME_SQL, sql_without_keyword_lookahead(load("sql")), docs=SHIPPED_DOCS["sql"]))
    return cases


PLAIN_NAME_SQL = "variant/sql, NAME without lookahead"


def sql_without_keyword_lookahead(text: str) -> str:
    """The shipped SQL grammar with NAME's keyword lookahead taken out (keywords are names too):
    llguidance refuses lookaheads, so this is the SQL its masks can be set beside ours on."""
    lines = text.splitlines()
    at = [i for i, line in enumerate(lines) if line.startswith("NAME: /(?!")]
    if len(at) != 1:
        raise ValueError("sql.lark: NAME's keyword lookahead not found (the variant needs updating)")
    lines[at[0]] = "NAME: /[a-z_][a-z0-9_]*/i"
    return "\n".join(lines) + "\n"


LLGUIDANCE_ONLY = "llguidance-only/"  # (the name prefix of llguidance_only_cases)


def _grammar_rows() -> list[dict]:
    """The grammar rows of ../shared/data/lark-grammars/INDEX.tsv (none where it is absent)."""
    index = LARK_DATA / "INDEX.tsv"
    if not index.exists():
        return []
    with index.open() as fh:
        return [row for row in csv.DictReader(fh, delimiter="\t") if row["kind"] == "grammar"]


def shared_cases() -> list[Case]:
    """The grammars of ../shared/data/lark-grammars that Lark itself loads (INDEX.tsv)."""
    cases = []
    for row in _grammar_rows():
        if row["loads_in_lark_1.3.1_earley"] == "yes":
            path = LARK_DATA / row["file"]
            cases.append(Case(row["file"], path.read_text(), row["start_rule_used"] or "start", str(path.parent)))
    return cases


def llguidance_only_cases() -> list[Case]:
    """The grammars of ../shared/data/lark-grammars that llguidance reads and Lark refuses
    (INDEX.tsv: its own samples, with `""` and terminals that match nothing), with the sample
    text that comes with one (rfc.xml) as its document."""
    cases = []
    for row in _grammar_rows():
        name = row["file"]
        if name.startswith("llguidance/") and name.endswith(".lark") and row["loads_in_lark_1.3.1_earley"] != "yes":
            path = LARK_DATA / name
            sample = path.with_suffix(".xml")
            cases.append(Case(LLGUIDANCE_ONLY + path.name, path.read_text(), "start", str(path.parent),
                              docs=[sample.read_text()] if sample.exists() else None))
    return cases


def walk_documents(case: Case, vocab, compiler, n: int, max_tokens: int, seed: int,
                   judged: bool = True) -> list[list[int]]:
    """Up to n token sequences from seeded random walks under our masks that end where the
    grammar may end and (`judged`) that Lark's parser accepts."""
    import lark

    from constrain import Matcher

    grammar = compiler.compile_lark(case.text, case.start, import_paths=[case.folder] if case.folder else ())
    parser = None
    if judged:
        try:
            parser = lark.Lark(case.text, start=case.start, parser="earley", import_paths=[case.folder] if case.folder else [])
        except Exception:
            return []
    rng = random.Random(seed)
    bm = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    eos = set(vocab.eos_token_ids)
    out: list[list[int]] = []
    for _ in range(4 * n):
        if len(out) == n:
            break
        m = Matcher(grammar)
        tokens: list[int] = []
        for step in range(max_tokens):
            m.fill_next_token_bitmask(bm)
            allowed = np.flatnonzero(np.unpackbits(bm.view(np.uint8), bitorder="little")[: vocab.size])
            text_ids = [t for t in allowed if t not in eos]
            if len(text_ids) < len(allowed) and (not text_ids or (step > 4 and rng.random() < 0.25)):
                break
            if not text_ids:
                break
            if step > max_tokens // 2:
                forced = m.forced_bytes()
                follow = [t for t in text_ids if forced and forced.startswith(vocab.token_bytes[t])]
                if follow:
                    text_ids = [max(follow, key=lambda t: len(vocab.token_bytes[t]))]
            short = [t for t in text_ids if 0 < len(vocab.token_bytes[t].strip()) <= 3] or text_ids
            tokens.append(int(rng.choice(short)))
            m.accept_token(tokens[-1])
        if not m.is_accepting() or not tokens:
            continue
        try:
            if parser is not None:
                parser.parse(b"".join(vocab.token_bytes[t] for t in tokens).decode("utf-8"))
        except Exception:
            continue
        out.append(tokens)
    return out
