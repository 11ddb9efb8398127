#!/usr/bin/env bash
# Every tracked source file (.c .h .py .sh .mk, Makefile) carries `SPDX-License-Identifier: MIT` near its top
# (scripts/spdx.sh adds it); and scripts/spdx.sh itself, run on a scratch repository, puts it in the right place.
set -u
cd "$(dirname "$0")/.."
SRC=$PWD
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/lib.sh

# 1. the tree
missing=$(git ls-files | grep -E '(\.(c|h|py|sh|mk)|(^|/)Makefile)$' | while read -r f; do
  [ -f "$f" ] && ! head -n 15 "$f" | grep -q 'SPDX-License-Identifier: MIT' && echo "$f"
done)
if [ -z "$missing" ]; then ok; else
  bad "$(echo "$missing" | wc -l) source file(s) lack 'SPDX-License-Identifier: MIT' (run scripts/spdx.sh): $(echo "$missing" | head -5 | tr '\n' ' ')"
fi

# 2. the script, on one file of each kind
cd "$T" && git init -q . || exit 1
printf '/* what a.c is for,\n * over two lines. */\n#include <stdio.h>\nint main(void) { return 0; }\n' >a.c
printf '// what b.h is for\n// second line\nint b(void);\n' >b.h
printf '#!/usr/bin/env python3\n"""What c.py is for,\nover two lines."""\nfrom __future__ import annotations\nprint(1)\n' >c.py
printf '"""One-line docstring."""\nx = 1\n' >d.py
printf '#!/usr/bin/env bash\n# what e.sh is for\n# more\nset -u\necho ok\n' >e.sh
printf '# what the Makefile is for\nall:\n\t@echo ok\n' >Makefile
printf 'no comment at all\n' >f.mk
printf 'not a source\n' >g.txt
git add . && "$SRC/scripts/spdx.sh" "$T" >/dev/null || bad "scripts/spdx.sh failed"
want() { # want FILE LINE TEXT: line LINE of FILE is TEXT
  [ "$(sed -n "$2p" "$1")" = "$3" ] && ok || bad "$1 line $2: '$(sed -n "$2p" "$1")', want '$3'"
}
want a.c 3 '/* SPDX-License-Identifier: MIT */'
want b.h 3 '// SPDX-License-Identifier: MIT'
want c.py 4 '# SPDX-License-Identifier: MIT'
want d.py 2 '# SPDX-License-Identifier: MIT'
want e.sh 4 '# SPDX-License-Identifier: MIT'
want Makefile 2 '# SPDX-License-Identifier: MIT'
want f.mk 1 '# SPDX-License-Identifier: MIT'
grep -q SPDX g.txt && bad "g.txt changed" || ok
cc -std=c11 -fsyntax-only a.c && python3 -m py_compile c.py d.py && bash -n e.sh && make -s >/dev/null && ok ||
  bad "a file no longer compiles or runs after scripts/spdx.sh"
python3 -c 'import ast,sys; assert ast.get_docstring(ast.parse(open("c.py").read())).startswith("What c.py")' && ok ||
  bad "c.py lost its docstring"
sum1=$(cat a.c b.h c.py d.py e.sh Makefile f.mk | md5sum)
"$SRC/scripts/spdx.sh" "$T" >/dev/null
[ "$(cat a.c b.h c.py d.py e.sh Makefile f.mk | md5sum)" = "$sum1" ] && ok || bad "scripts/spdx.sh is not idempotent"

echo "check_spdx: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
