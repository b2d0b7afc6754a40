#!/usr/bin/env bash
# A swap under load (BENCHMARKS.md, "dlroute serve on loopback"): serve a
# signed bundle, send single inputs with wrk for 16 s, and rename one of
# two signed bundles (different markers) over the served file every
# 0.5 s. It prints wrk's report, then the activations, refusals and
# their times from serve's log. Run from the repository root; needs wrk.
set -euo pipefail
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT
go build -o "$dir/dlroute" ./cmd/dlroute
cd "$dir"
./dlroute bundle keygen -o rules.key >/dev/null
for marker in nvfork amdfork; do
	cp -r "$OLDPWD/rules" "rules-$marker"
	sed -i "s/^      - {marker: oneapi, device: kDLOneAPI}\$/&\n      - {marker: $marker, device: kDLCUDA}/" "rules-$marker/jax/v3/rules.yaml"
	./dlroute bundle build "rules-$marker" -o "$marker.tgz" --sign rules.key --revision "$marker" >/dev/null
done
cp nvfork.tgz live.tgz
./dlroute serve --bundle live.tgz --key rules.key.pub --keep off --addr 127.0.0.1:8181 2>serve.log &
for _ in $(seq 50); do curl -sf localhost:8181/healthz >/dev/null && break; sleep 0.2; done
(
	end=$((SECONDS + 16))
	i=0
	while ((SECONDS < end)); do
		m=$([ $((i % 2)) = 0 ] && echo amdfork || echo nvfork)
		cp "$m.tgz" next.tgz && mv next.tgz live.tgz
		i=$((i + 1))
		sleep 0.5
	done
) &
wrk -t2 -c16 -d16s --latency -s "$OLDPWD/internal/serve/testdata/wrk/single.lua" http://127.0.0.1:8181
wait %2 2>/dev/null || true
echo "activations: $(grep -c 'rules activated' serve.log)  refused: $(grep -c 'rules refused' serve.log || true)"
grep 'rules activated' serve.log | grep -o 'seconds=[0-9.]*' | cut -d= -f2 | sort -n |
	awk '{a[NR]=$1} END {if (NR) printf "activation seconds: median %s, max %s\n", a[int((NR+1)/2)], a[NR]}'
