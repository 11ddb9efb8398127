// hubprof report: the page's only script (built into the C source by the Makefile, admitted by its hash in the
// page's CSP). Sorts tables, draws the timeline from its data block, opens kernel sections. No data in here.
// SPDX-License-Identifier: MIT
(function () {
  'use strict';

  // ---- sortable tables: a click on a header sorts by that column (numbers by data-v) ----
  document.querySelectorAll('table.sort').forEach(function (t) {
    t.querySelectorAll('th').forEach(function (th, i) {
      th.addEventListener('click', function () {
        var asc = th.getAttribute('aria-sort') !== 'ascending';
        t.querySelectorAll('th').forEach(function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
        var tb = t.tBodies[0], rows = Array.prototype.slice.call(tb.rows);
        function key(r) {
          var c = r.cells[i], v = c.getAttribute('data-v');
          return v === null ? c.textContent : (v === '' ? NaN : parseFloat(v));
        }
        rows.sort(function (a, b) {
          var x = key(a), y = key(b), r;
          if (typeof x === 'number' && typeof y === 'number') {
            if (isNaN(x) || isNaN(y)) return isNaN(x) - isNaN(y);
            r = x - y;
          } else r = String(x).localeCompare(String(y));
          return asc ? r : -r;
        });
        rows.forEach(function (r) { tb.appendChild(r); });
      });
    });
  });

  // ---- kernel sections: #kernel-N opens N's section ----
  function openKernel(id, scroll) {
    var d = document.getElementById(id);
    if (d && d.tagName === 'DETAILS') {
      d.open = true;
      if (scroll) d.scrollIntoView();
      return true;
    }
    return false;
  }

  var tl = document.getElementById('timeline'), dataEl = document.getElementById('timeline-data');
  var hubprof = window.hubprof = {timeline: null};

  function fromHash() {
    var h = decodeURIComponent(location.hash.slice(1));
    var m = /^t=(-?\d+(?:\.\d+)?)-(-?\d+(?:\.\d+)?)$/.exec(h);
    if (m && hubprof.timeline) hubprof.timeline.setWindow(parseFloat(m[1]), parseFloat(m[2]));
    else if (/^kernel-\d+$/.test(h)) openKernel(h, true);
  }
  window.addEventListener('hashchange', fromHash);
  // a link to a kernel opens its section at once (the hash then scrolls to it)
  document.addEventListener('click', function (e) {
    var a = e.target.closest && e.target.closest('a[href^="#kernel-"]');
    if (a) openKernel(a.getAttribute('href').slice(1), false);
  });
  if (!tl || !dataEl) {
    fromHash();
    return;
  }

  // ---- the data block: base64 of gzip of varints (docs/cli/report.md, "The timeline's data") ----
  function Reader(u) { this.u = u; this.i = 0; }
  Reader.prototype.v = function () {
    var u = this.u, x = 0, m = 1, b;
    do {
      b = u[this.i++];
      x += (b & 127) * m;
      m *= 128;
    } while (b & 128);
    return x;
  };
  Reader.prototype.z = function () {
    var x = this.v();
    return x % 2 ? -(x + 1) / 2 : x / 2;
  };
  var utf8 = new TextDecoder('utf-8');
  Reader.prototype.s = function () {
    var n = this.v(), s = utf8.decode(this.u.subarray(this.i, this.i + n));
    this.i += n;
    return s;
  };
  Reader.prototype.f = function () {
    var f = new DataView(this.u.buffer, this.u.byteOffset + this.i, 4).getFloat32(0, true);
    this.i += 4;
    return f;
  };

  function parse(u) {
    var r = new Reader(u);
    if (String.fromCharCode(u[0], u[1], u[2], u[3]) !== 'HPT1') throw new Error('not a timeline block');
    r.i = 4;
    var D = {t0: r.z(), span: r.v()};
    var nl = r.v();
    D.nkernels = r.v();
    D.labels = [];
    for (var i = 0; i < nl; i++) D.labels.push(r.s());
    var nc = r.v();
    D.counters = [];
    for (i = 0; i < nc; i++) D.counters.push({name: r.s(), unit: r.s()});
    var ns = r.v();
    D.shapes = [];
    for (i = 0; i < ns; i++) {
      var g = [];
      for (var k = 0; k < 6; k++) g.push(r.v());
      D.shapes.push(g);
    }
    var ng = r.v();
    D.groups = [];
    for (i = 0; i < ng; i++) D.groups.push(r.s());
    var nr = r.v();
    D.rows = [];
    D.count = 0;
    for (i = 0; i < nr; i++) {
      var row = {group: r.v(), label: r.s(), kind: r.v()}, n = r.v();
      row.n = n;
      row.total = r.v(); // more than n: the row's dispatches are binned (its bins below)
      row.start = new Float64Array(n);
      row.dur = new Float64Array(n);
      row.lab = new Uint32Array(n);
      row.maxDur = 0;
      row.maxDepth = 0;
      if (row.kind === 0) {
        row.shape = new Uint32Array(n);
        row.id = new Float64Array(n);
        row.trow = new Uint32Array(n);
        row.enq = new Float64Array(n);
        row.vals = [];
      } else row.depth = new Uint8Array(n);
      var t = 0, id = 0;
      for (var j = 0; j < n; j++) {
        t += r.z();
        row.start[j] = t;
        var d = r.v();
        row.dur[j] = d;
        if (d > row.maxDur) row.maxDur = d;
        row.lab[j] = r.v();
        if (row.kind === 0) {
          row.shape[j] = r.v();
          id += r.z();
          row.id[j] = id;
          row.trow[j] = r.v();
          row.enq[j] = t - r.z();
          var nv = r.v();
          if (nv) {
            var vs = [];
            for (k = 0; k < nv; k++) vs.push([r.v(), r.f()]);
            row.vals[j] = vs;
          }
        } else {
          row.depth[j] = r.v();
          if (row.depth[j] > row.maxDepth) row.maxDepth = row.depth[j];
        }
      }
      var lb = r.v();
      if (lb) {
        row.lodBusy = u.subarray(r.i, r.i + lb);
        r.i += lb;
        row.lodLab = new Uint32Array(lb);
        for (j = 0; j < lb; j++) row.lodLab[j] = r.v();
      }
      D.count += row.total;
      D.rows.push(row);
    }
    return D;
  }

  async function load() {
    var bin = atob(dataEl.textContent.trim()), u = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) u[i] = bin.charCodeAt(i);
    var st = new Blob([u]).stream().pipeThrough(new DecompressionStream('gzip'));
    return parse(new Uint8Array(await new Response(st).arrayBuffer()));
  }

  // ---- colours: the page's kernel N as rp_color() writes it ----
  var LIGHT = [52, 38, 66];
  function kernelColor(n) { return 'hsl(' + ((n * 137508) % 360000 / 1000).toFixed(1) + ',65%,' + LIGHT[n % 3] + '%)'; }

  function fmtNs(ns) {
    var a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toPrecision(4) + ' s';
    if (a >= 1e6) return (ns / 1e6).toPrecision(4) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toPrecision(4) + ' \u00b5s';
    return Math.round(ns) + ' ns';
  }

  function Timeline(D) {
    var self = this, canvas = document.getElementById('tl-canvas'), tip = document.getElementById('tl-tip');
    var sel = document.getElementById('tl-sel'), ctx = canvas.getContext('2d');
    var FONT = '11px system-ui, sans-serif', ROW = 18, GROUP = 18, LINE = 13, MAXH = 640;
    var v0 = 0, v1 = Math.max(D.span, 1), gutter = 160, W = 0, H = 0, layout = [], selected = null;
    var colors = [];
    for (var i = 0; i < D.labels.length; i++) {
      if (i < D.nkernels) colors.push(kernelColor(i));
      else if (i < D.nkernels + 5) colors.push('hsl(200,15%,55%)');
      else colors.push('hsl(' + (10 + (i * 47) % 60) + ',70%,64%)');
    }
    var widths = {};
    function textWidth(s) {
      var w = widths[s];
      if (w === undefined) w = widths[s] = ctx.measureText(s).width;
      return w;
    }
    // a label wrapped to width w in lines (never cut: long words break anywhere)
    function wrap(s, w) {
      var out = [], line = '';
      for (var c of s) {
        if (c === '\n') { out.push(line); line = ''; continue; }
        if (line && ctx.measureText(line + c).width > w) { out.push(line); line = ''; }
        line += c;
      }
      out.push(line);
      return out;
    }

    function doLayout() {
      W = Math.max(320, tl.clientWidth || 900);
      ctx.font = FONT;
      var longest = 0;
      D.rows.forEach(function (r) { longest = Math.max(longest, ctx.measureText(r.label).width); });
      gutter = Math.min(Math.max(80, longest + 14), Math.floor(W * 0.3));
      layout = [];
      var y = 0, g = -1;
      D.rows.forEach(function (r, i) {
        if (r.group !== g) {
          g = r.group;
          var gl = wrap(D.groups[g], W - 8);
          layout.push({group: g, y: y, h: Math.max(GROUP, gl.length * LINE + 5), lines: gl});
          y += layout[layout.length - 1].h;
        }
        var lines = wrap(r.label, gutter - 10), lanes = r.kind ? r.maxDepth + 1 : 1;
        var h = Math.max(ROW * lanes, lines.length * LINE + 5);
        layout.push({row: i, y: y, h: h, lines: lines, lane: h / lanes});
        y += h;
      });
      H = y + 20;
      var dpr = window.devicePixelRatio || 1;
      canvas.width = W * dpr;
      canvas.height = H * dpr;
      canvas.style.width = W + 'px';
      canvas.style.height = H + 'px';
      tl.style.maxHeight = MAXH + 'px';
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    }

    function lowerBound(a, n, x) {
      var lo = 0, hi = n;
      while (lo < hi) {
        var m = (lo + hi) >> 1;
        if (a[m] < x) lo = m + 1; else hi = m;
      }
      return lo;
    }
    function xOf(t) { return gutter + (t - v0) * (W - gutter) / (v1 - v0); }
    function tOf(x) { return v0 + (x - gutter) * (v1 - v0) / (W - gutter); }

    function drawRow(L) {
      var r = D.rows[L.row], w = W - gutter, pxns = w / (v1 - v0), n = r.n;
      var lo = lowerBound(r.start, n, v0 - r.maxDur), hi = lowerBound(r.start, n, v1 + 1);
      var lodBins = r.lodBusy ? r.lodBusy.length : 0;
      // binned rows: their bins always; otherwise many items under each pixel and the overview's bins at most 3
      // pixels wide: the precomputed bins
      if (lodBins && (r.total > r.n || (hi - lo > 4 * w && D.span / lodBins * pxns <= 3))) {
        var bw = D.span / lodBins, b0 = Math.max(0, Math.floor(v0 / bw)), b1 = Math.min(lodBins - 1, Math.floor(v1 / bw));
        for (var b = b0; b <= b1; b++) {
          var busy = r.lodBusy[b];
          if (!busy) continue;
          ctx.globalAlpha = 0.3 + 0.7 * busy / 255;
          ctx.fillStyle = colors[r.lodLab[b] - 1];
          var x0 = xOf(b * bw), x1 = xOf((b + 1) * bw);
          ctx.fillRect(x0, L.y + 2, Math.max(1, x1 - x0), L.h - 4);
        }
        ctx.globalAlpha = 1;
        return hi - lo;
      }
      var i = lo;
      while (i < hi) {
        var s = r.start[i], e = s + r.dur[i];
        if (e < v0) {
          i++;
          continue;
        }
        var xa = gutter + (s - v0) * pxns, xb = gutter + (e - v0) * pxns;
        if (xa < gutter) xa = gutter;
        if (xb > W) xb = W;
        var y = L.y + 2, h = L.h - 4;
        if (r.kind) {
          y = L.y + 1 + r.depth[i] * L.lane;
          h = L.lane - 2;
        }
        if (xb - xa < 1) {
          // under a pixel: one pixel in this item's colour; the next few in the same pixel are looked at for
          // longer ones, then the rest of the pixel is skipped (a binary search): a redraw costs pixels, not items
          var px = Math.floor(xa), tnext = v0 + (px + 1 - gutter) / pxns;
          ctx.fillStyle = colors[r.lab[i]];
          ctx.fillRect(px, y, 1, h);
          var k = i + 1;
          for (; k < hi && k < i + 16 && r.start[k] < tnext; k++)
            if (r.start[k] + r.dur[k] >= tnext) break;
          if (k < hi && k < i + 16) {
            i = k;
            continue;
          }
          var j = lowerBound(r.start, r.n, tnext);
          i = j > i ? j : i + 1;
          continue;
        }
        var lab = r.lab[i];
        ctx.fillStyle = colors[lab];
        ctx.fillRect(xa, y, xb - xa, h);
        if (xb - xa > 24 && h >= 12) { // the whole label inside its box, or none
          var name = D.labels[lab];
          if (textWidth(name) + 6 <= xb - xa) {
            ctx.fillStyle = '#fff';
            ctx.fillText(name, xa + 3, y + h / 2 + 4);
          }
        }
        i++;
      }
      return hi - lo;
    }

    function draw() {
      var t = performance.now();
      ctx.clearRect(0, 0, W, H);
      ctx.font = FONT;
      ctx.textBaseline = 'alphabetic';
      var drawn = 0;
      layout.forEach(function (L) {
        if (L.lines && L.group !== undefined) {
          ctx.fillStyle = '#e9eef5';
          ctx.fillRect(0, L.y, W, L.h);
          ctx.fillStyle = '#222';
          L.lines.forEach(function (s, k) { ctx.fillText(s, 4, L.y + 12 + k * LINE); });
          return;
        }
        ctx.fillStyle = L.row % 2 ? '#fafafa' : '#f3f3f3';
        ctx.fillRect(gutter, L.y, W - gutter, L.h);
        ctx.fillStyle = '#222';
        L.lines.forEach(function (s, k) { ctx.fillText(s, 4, L.y + 12 + k * LINE); });
        ctx.save();
        ctx.beginPath();
        ctx.rect(gutter, L.y, W - gutter, L.h);
        ctx.clip();
        drawn += drawRow(L);
        ctx.restore();
      });
      // the axis: the window's ends, from the run's start
      ctx.fillStyle = '#444';
      ctx.fillText(fmtNs(v0), gutter + 2, H - 6);
      var e = fmtNs(v1);
      ctx.fillText(e, W - textWidth(e) - 4, H - 6);
      // the selection: outlined (two pixels at least), and its flow from its enqueue on its thread to its
      // start on its queue
      if (selected) {
        var r = D.rows[selected.row], i = selected.i, tr = r.kind ? 0 : r.trow[i];
        layout.forEach(function (L) {
          if (L.row !== selected.row) return;
          var y = r.kind ? L.y + 1 + r.depth[i] * L.lane : L.y + 2, h = r.kind ? L.lane - 2 : L.h - 4;
          var xa = Math.max(gutter, xOf(r.start[i])), xb = Math.min(W, xOf(r.start[i] + r.dur[i]));
          ctx.strokeStyle = '#000';
          ctx.lineWidth = 2;
          if (xb >= gutter && xa <= W) ctx.strokeRect(xa - 1, y, Math.max(xb - xa, 0) + 2, h);
        });
        if (tr) {
          var from = null, to = null;
          layout.forEach(function (L) {
            if (L.row === tr - 1) from = L;
            if (L.row === selected.row) to = L;
          });
          if (from && to) {
            ctx.strokeStyle = '#c00';
            ctx.lineWidth = 1.5;
            ctx.beginPath();
            ctx.moveTo(xOf(r.enq[i]), from.y + from.h / 2);
            ctx.lineTo(xOf(r.start[i]), to.y + to.h / 2);
            ctx.stroke();
          }
        }
      }
      tl.setAttribute('data-t0-ns', String(Math.round(D.t0 + v0)));
      tl.setAttribute('data-t1-ns', String(Math.round(D.t0 + v1)));
      tl.setAttribute('data-drawn', String(drawn));
      tl.setAttribute('data-draw-ms', (performance.now() - t).toFixed(2));
    }

    function clampView(a, b) {
      var minW = 10, pad = D.span * 0.05 + 10;
      if (b - a < minW) { var c = (a + b) / 2; a = c - minW / 2; b = c + minW / 2; }
      if (b - a > D.span + 2 * pad) { a = -pad; b = D.span + pad; }
      if (a < -pad) { b += -pad - a; a = -pad; }
      if (b > D.span + pad) { a -= b - D.span - pad; b = D.span + pad; }
      v0 = a;
      v1 = b;
    }
    function zoomAt(x, f) {
      var t = tOf(Math.max(gutter, Math.min(W, x)));
      clampView(t - (t - v0) * f, t + (v1 - t) * f);
      draw();
    }
    function pan(dt) {
      clampView(v0 + dt, v1 + dt);
      draw();
    }
    function reset() {
      v0 = 0;
      v1 = Math.max(D.span, 1);
      draw();
    }

    // the item under (x, y): {row, i} or null
    function hit(x, y) {
      if (x < gutter) return null;
      var L = null;
      for (var k = 0; k < layout.length; k++)
        if (layout[k].row !== undefined && y >= layout[k].y && y < layout[k].y + layout[k].h) L = layout[k];
      if (!L) return null;
      var r = D.rows[L.row], tol = 2 * (v1 - v0) / (W - gutter), t = tOf(x);
      if (r.total > r.n && r.lodBusy) { // a binned row: its bin
        var bw = D.span / r.lodBusy.length, b = Math.floor(t / bw);
        return b >= 0 && b < r.lodBusy.length && r.lodBusy[b] ? {row: L.row, bin: b} : null;
      }
      var hi = lowerBound(r.start, r.n, t + tol + 1), best = -1, bestDur = Infinity;
      for (var i = hi - 1, steps = 0; i >= 0 && steps < 5000; i--, steps++) {
        if (r.start[i] + r.maxDur < t - tol) break;
        if (r.start[i] - tol <= t && r.start[i] + r.dur[i] + tol >= t) {
          if (r.kind && Math.floor((y - L.y - 1) / L.lane) !== r.depth[i]) continue;
          if (r.dur[i] < bestDur) { best = i; bestDur = r.dur[i]; }
        }
      }
      return best < 0 ? null : {row: L.row, i: best};
    }

    function describeBin(h) {
      var r = D.rows[h.row], bw = D.span / r.lodBusy.length, busy = r.lodBusy[h.bin];
      return ['binned: ' + fmtNs(h.bin * bw) + ' to ' + fmtNs((h.bin + 1) * bw) + ' from the run\'s start',
              (busy === 255 ? 'busy throughout' : Math.round((busy - 1) / 254 * 100) + '% busy') +
              ', its longest: ' + D.labels[r.lodLab[h.bin] - 1],
              D.groups[r.group] + ' \u00b7 ' + r.label + ' (' + r.total + ' items in ' + r.lodBusy.length + ' bins)'].join('\n');
    }

    function describe(h) {
      if (h.bin !== undefined) return describeBin(h);
      var r = D.rows[h.row], i = h.i, lab = r.lab[i], out = [D.labels[lab]];
      out.push('start ' + fmtNs(r.start[i]) + ' (from the run\'s start), duration ' + fmtNs(r.dur[i]));
      if (r.kind === 0 && lab < D.nkernels) {
        var g = D.shapes[r.shape[i]];
        if (g) out.push('grid ' + g[0] + 'x' + g[1] + 'x' + g[2] + ', work-group ' +
                        (g[3] ? g[3] + 'x' + g[4] + 'x' + g[5] : 'chosen by the runtime'));
        out.push('dispatch row ' + r.id[i] + (r.trow[i] ? ', enqueued ' + fmtNs(r.start[i] - r.enq[i]) + ' before' : ''));
        (r.vals[i] || []).forEach(function (v) {
          var c = D.counters[v[0]];
          out.push(c.name + ' ' + (+v[1].toPrecision(6)) + (c.unit ? ' ' + c.unit : ''));
        });
      }
      out.push(D.groups[r.group] + ' \u00b7 ' + r.label);
      return out.join('\n');
    }

    function pos(e) {
      var b = canvas.getBoundingClientRect();
      return [e.clientX - b.left, e.clientY - b.top];
    }
    canvas.addEventListener('wheel', function (e) {
      e.preventDefault();
      var p = pos(e), d = e.deltaMode === 1 ? e.deltaY * 16 : e.deltaY;
      zoomAt(p[0], Math.exp(Math.max(-10, Math.min(10, d * 0.002))));
    }, {passive: false});
    var drag = null;
    canvas.addEventListener('mousedown', function (e) {
      if (e.button !== 0) return;
      var p = pos(e);
      drag = {x: p[0], y: p[1], v0: v0, v1: v1, moved: false};
      e.preventDefault();
      canvas.focus();
    });
    window.addEventListener('mousemove', function (e) {
      var p = pos(e);
      if (drag) {
        var dx = p[0] - drag.x;
        if (Math.abs(dx) > 2) drag.moved = true;
        if (drag.moved) {
          var dt = -dx * (drag.v1 - drag.v0) / (W - gutter);
          clampView(drag.v0 + dt, drag.v1 + dt);
          draw();
        }
        return;
      }
      if (e.target !== canvas) return;
      var h = hit(p[0], p[1]);
      if (!h) {
        tip.hidden = true;
        return;
      }
      tip.textContent = describe(h);
      var hr = D.rows[h.row];
      tip.setAttribute('data-dur-ns', h.bin === undefined ? String(hr.dur[h.i]) : '');
      tip.setAttribute('data-label', D.labels[h.bin === undefined ? hr.lab[h.i] : hr.lodLab[h.bin] - 1]);
      tip.hidden = false;
      var bx = tl.getBoundingClientRect();
      tip.style.left = Math.min(p[0] + 14, bx.width - 280) + 'px';
      tip.style.top = (p[1] + 14 + canvas.offsetTop) + 'px';
    });
    window.addEventListener('mouseup', function (e) {
      if (!drag) return;
      var d = drag;
      drag = null;
      if (d.moved) return;
      var h = hit(d.x, d.y);
      select(h && h.bin === undefined ? h : null);
    });
    canvas.addEventListener('mouseleave', function () { tip.hidden = true; });
    canvas.addEventListener('dblclick', function (e) {
      e.preventDefault();
      reset();
    });
    canvas.addEventListener('keydown', function (e) {
      var c = (W + gutter) / 2;
      if (e.key === '+' || e.key === '=') zoomAt(c, 1 / 1.5);
      else if (e.key === '-' || e.key === '_') zoomAt(c, 1.5);
      else if (e.key === 'ArrowLeft') pan(-(v1 - v0) * 0.1);
      else if (e.key === 'ArrowRight') pan((v1 - v0) * 0.1);
      else if (e.key === '0' || e.key === 'Home') reset();
      else return;
      e.preventDefault();
    });

    function select(h) {
      selected = h;
      sel.textContent = '';
      if (h) {
        var r = D.rows[h.row], lab = r.lab[h.i];
        var pre = document.createElement('pre');
        pre.textContent = describe(h);
        sel.appendChild(pre);
        if (lab < D.nkernels) {
          var a = document.createElement('a');
          a.href = '#kernel-' + lab;
          a.textContent = 'its kernel\'s section';
          sel.appendChild(a);
          openKernel('kernel-' + lab, false); // opened, not scrolled to: the link does that
        }
      }
      draw();
    }

    // hooks for scripts and tests (docs/cli/report.md): absolute ns on the store's clock
    self.setWindow = function (a, b) {
      if (!(b > a)) return;
      clampView(a - D.t0, b - D.t0);
      draw();
    };
    self.window = function () { return [D.t0 + v0, D.t0 + v1]; };
    self.rows = function () {
      return layout.filter(function (L) { return L.row !== undefined; }).map(function (L) {
        var r = D.rows[L.row];
        return {label: r.label, group: D.groups[r.group], kind: r.kind ? 'thread' : 'queue', y: L.y, h: L.h, n: r.n,
                total: r.total, bins: r.total > r.n && r.lodBusy ? r.lodBusy.length : 0};
      });
    };
    self.x = function (t) { return xOf(t - D.t0); };
    self.t = function (x) { return D.t0 + tOf(x); };
    self.selected = function () {
      if (!selected) return null;
      var r = D.rows[selected.row];
      return {label: D.labels[r.lab[selected.i]], start: D.t0 + r.start[selected.i], dur: r.dur[selected.i],
              row: r.kind ? null : r.id[selected.i]};
    };
    self.redraw = function () {
      draw();
      return parseFloat(tl.getAttribute('data-draw-ms'));
    };
    self.count = D.count;

    doLayout();
    draw();
    var lastW = W;
    window.addEventListener('resize', function () {
      var w = tl.clientWidth;
      if (w !== lastW) {
        lastW = w;
        doLayout();
        draw();
      }
    });
  }

  var status = document.getElementById('tl-status');
  load().then(function (D) {
    hubprof.timeline = new Timeline(D);
    status.textContent = D.count + ' items in ' + D.rows.length + ' rows.';
    tl.setAttribute('data-load-ms', performance.now().toFixed(1));
    tl.setAttribute('data-ready', '1');
    fromHash();
  }).catch(function (e) {
    status.textContent = 'The timeline cannot be drawn here: ' + e.message;
    tl.setAttribute('data-ready', 'error');
    console.error('hubprof report: ' + e.message);
  });
})();
