// Two canvases of the partition page: the hash space as bands (one per partition, as wide as its hash range,
// coloured by heat) and the heat map over time (a row per partition, or per group of partitions when there are
// more than fit, a column per bucket of the history the server keeps).

import { colour, HASH_SPACE, totalThrottled } from "./heat.js";

const MAX_ROWS = 64;

function fit(canvas) {
  const ratio = window.devicePixelRatio || 1;
  canvas.width = Math.max(1, Math.round(canvas.clientWidth * ratio));
  canvas.height = Math.max(1, Math.round(canvas.clientHeight * ratio));
  return canvas.getContext("2d");
}

export function drawBands(canvas, partitions, now) {
  const g = fit(canvas);
  const { width, height } = canvas;
  g.clearRect(0, 0, width, height);
  partitions.forEach((p, i) => {
    const lo = parseInt(p.hash_range[0], 16) / HASH_SPACE;
    const hi = (parseInt(p.hash_range[1], 16) + 1) / HASH_SPACE;
    const x = Math.floor(lo * width);
    const w = Math.max(1, Math.ceil((hi - lo) * width));
    g.fillStyle = colour(now?.[i]?.heat ?? 0, (now?.[i]?.throttled ?? 0) > 0);
    g.fillRect(x, 0, w, height);
    if (totalThrottled(p) > 0) {
      g.fillStyle = "#b3261e";
      g.fillRect(x, 0, w, Math.ceil(height / 8));
    }
    if (w > 3) {
      g.fillStyle = "#ffffff";
      g.fillRect(x, 0, 1, height);
    }
  });
}

// The partitions of row r of the heat map: all of them when few, else equal runs of them.
function rowsOf(count) {
  const rows = Math.min(count, MAX_ROWS);
  return Array.from({ length: rows }, (_, r) => [Math.floor((r * count) / rows), Math.floor(((r + 1) * count) / rows)]);
}

// `columns`: heat.js columnsOf(), the oldest at the left; `count`: partitions today.
export function drawHeat(canvas, columns, count) {
  const g = fit(canvas);
  const { width, height } = canvas;
  g.fillStyle = "#fafbfc";
  g.fillRect(0, 0, width, height);
  const rows = rowsOf(count);
  const cellW = width / Math.max(columns.length, 1);
  const cellH = height / Math.max(rows.length, 1);
  columns.forEach((cells, column) => {
    if (!cells) return;
    rows.forEach(([from, to], row) => {
      let hottest = 0;
      let throttled = false;
      for (let i = from; i < to; i += 1) {
        hottest = Math.max(hottest, cells[i].heat);
        throttled ||= cells[i].throttled > 0;
      }
      if (hottest === 0 && !throttled) return;
      g.fillStyle = colour(hottest, throttled);
      g.fillRect(Math.floor(column * cellW), row * cellH, Math.max(1, Math.ceil(cellW)), Math.ceil(cellH));
    });
  });
}
