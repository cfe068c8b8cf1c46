#!/bin/bash
# Count error "signatures" in one or more log files (plain or gzip-compressed).
# Variable parts - leading timestamps, UUIDs, hex values, IP addresses, long ids
# and numbers - become placeholders, so one error repeated with different ids
# collapses into a single counted line.
#
# Usage: error-signatures.sh [-p REGEX] [-n TOP] [-w WIDTH] FILE...
#   -p  extended regex selecting lines (case-insensitive); default below
#   -n  how many signatures to print (default 20)
#   -w  cut each signature to this many characters (default 160)
# Give rotated files oldest first if order matters to you; counts do not depend on it.
set -euo pipefail

pattern='error|fatal|panic|exception|critical|traceback|failed'
top=20
width=160

usage() {
  echo "usage: $0 [-p REGEX] [-n TOP] [-w WIDTH] FILE..." >&2
  exit 2
}

while getopts 'p:n:w:h' opt; do
  case "$opt" in
    p) pattern=$OPTARG ;;
    n) top=$OPTARG ;;
    w) width=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ "$#" -ge 1 ] || usage

matches=$(mktemp)
trap 'rm -f "$matches"' EXIT

# gzip -dcf decompresses .gz and passes plain files through unchanged.
gzip -dcf -- "$@" | grep -aiE -- "$pattern" > "$matches" || true
total=$(wc -l < "$matches" | tr -d ' ')
echo "matching lines: $total (pattern: $pattern)"
[ "$total" -gt 0 ] || exit 0

sed -E \
  -e 's/^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9:.,]+(Z|[+-][0-9:]{2,5})?[[:space:]]*//' \
  -e 's/^[A-Z][a-z]{2} [ 0-9][0-9] [0-9:]{8} [^ ]+ //' \
  -e 's/[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/<uuid>/g' \
  -e 's/0x[0-9a-fA-F]+/<hex>/g' \
  -e 's/[0-9]{1,3}(\.[0-9]{1,3}){3}(:[0-9]+)?/<ip>/g' \
  -e 's/[0-9a-fA-F]{16,}/<id>/g' \
  -e 's/[0-9]+/<n>/g' \
  "$matches" | cut -c "1-$width" | sort | uniq -c | sort -rn | head -n "$top"
