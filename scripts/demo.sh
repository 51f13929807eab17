#!/usr/bin/env bash
# One command from a fresh clone: set up, serve the bundled demo site on 127.0.0.1,
# run `scrapy crawl discover` against it, and show where the results are.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh package  # the package alone: a crawl needs no test tools
out=discovery/demo
# A fresh folder each time: the demo server's port changes from run to run, and the folder's
# state.json belongs to one origin (a re-run against another is refused, by design).
rm -rf "$out"
mkdir -p "$out"
portfile=$(mktemp)
.venv/bin/python -m discovery_crawler.site_server demo/23people-handbook/site.tar.xz \
  --rewrite https://23people.io --port-file "$portfile" >/dev/null &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -f "$portfile"' EXIT
for _ in $(seq 50); do [ -s "$portfile" ] && break; sleep 0.1; done
port=$(cat "$portfile")
# The SSRF guard (profile service) refuses loopback: the demo's own server is allow-listed,
# as the tests allow-list theirs (no effect when the guard is off). A job in bounded chunks
# (service: exit 6, more to do) is run again until it is done, as a backend would.
while true; do
  status=0
  # No -O: a run given no feed writes $out/inventory.jsonl (an -O in "$@" replaces it).
  .venv/bin/scrapy crawl discover -a url="http://127.0.0.1:$port/" -a out="$out" \
    -s SSRF_ALLOWED_NETWORKS=127.0.0.1/32 -s "SSRF_ALLOWED_PORTS=80,443,$port" "$@" \
    || status=$?
  [ "$status" = 6 ] || break
  echo "(one bounded chunk done, exit 6: the job's next invocation continues it)"
done
# 5: a limit stopped the run (max_pages, a profile's caps): its inventory is still written
if [ "$status" != 0 ] && [ "$status" != 5 ]; then
  exit "$status"
fi
echo
if [ -f "$out/inventory.jsonl" ]; then
  echo "Inventory: $out/inventory.jsonl ($(wc -l < "$out/inventory.jsonl") URLs)"
fi
echo "Crawl log: $out/_crawl-log.json"
echo "Report:    $out/report.html"
echo "Trees:     .venv/bin/scrapy report $out --tree"
