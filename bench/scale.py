"""scale: the ingest benchmark at growing inbox sizes (1k, 10k and, with --full, 50k).

Each size gets fresh games, mailboxes and a fresh database, with the same mix of mails and
the same number of mails per seat (so the work per mail is the same). Linear means the time
per mail stays flat: each size's ms/mail is compared with the smallest size's (ratio 1.0 is
perfectly linear; target <= 1.5). Peak RSS of the bot's process must stay < 200 MB and flat.
"""

from __future__ import annotations

from typing import Any

from bench import ingest
from bench.world import World

SIZES = (1000, 10000)
FULL_SIZES = (1000, 10000, 50000)
LINEAR_TARGET = 1.5
RSS_TARGET_MB = 200.0


def run(world: World, sizes: tuple[int, ...] = SIZES) -> dict[str, Any]:
    runs = []
    for size in sizes:
        result = ingest.run(world, size)
        runs.append(
            {
                "size": size,
                "bot_seconds": result["bot"]["seconds"],
                "bot_ms_per_mail": 1000 * result["bot"]["seconds"] / size,
                "bot_cpu_ms_per_mail": result["bot"]["cpu_ms_per_mail"],
                "reference_ms_per_mail": 1000 * result["reference"]["seconds"] / size,
                "peak_rss_mb": result["bot"]["peak_rss_mb"],
                "ingest_ratio": result["ratio"],
                "problems": result["problems"],
            }
        )
    base = runs[0]
    lines = []
    met = True
    for r in runs:
        # CPU per mail: wall time on a shared 2-core machine also counts other people's work.
        r["growth"] = r["bot_cpu_ms_per_mail"] / base["bot_cpu_ms_per_mail"]
        r["wall_growth"] = r["bot_ms_per_mail"] / base["bot_ms_per_mail"]
        ok = r["growth"] <= LINEAR_TARGET and r["peak_rss_mb"] < RSS_TARGET_MB and not r["problems"]
        met = met and ok
        lines.append(
            f"scale    {r['size']:>6} mails: {r['bot_seconds']:7.1f} s, {r['bot_ms_per_mail']:.2f} ms/mail "
            f"({r['bot_cpu_ms_per_mail']:.2f} ms CPU), per-mail CPU vs {base['size']}: {r['growth']:.2f} "
            f"(target <= {LINEAR_TARGET}), peak RSS {r['peak_rss_mb']:.0f} MB (target < {RSS_TARGET_MB:.0f}) "
            f"{'OK' if ok else 'MISSED'}" + (f" [{'; '.join(r['problems'])}]" if r["problems"] else "")
        )
    rss = [r["peak_rss_mb"] for r in runs]
    return {
        "benchmark": "scale",
        "runs": runs,
        "peak_rss_spread_mb": max(rss) - min(rss),
        "ratio": max(r["growth"] for r in runs),
        "target": f"per-mail CPU growth <= {LINEAR_TARGET}, peak RSS < {RSS_TARGET_MB:.0f} MB",
        "met": met,
        "line": "\n".join(lines),
    }
