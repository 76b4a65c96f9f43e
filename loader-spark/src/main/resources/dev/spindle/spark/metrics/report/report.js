// Draws the charts of a Spindle report page from the JSON in #report-data. Text from the report
// reaches the page only through textContent and Chart.js labels, never as HTML.
(function () {
  'use strict';
  const report = JSON.parse(document.getElementById('report-data').textContent);
  const root = document.getElementById('charts');
  const colors = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2'];
  Chart.defaults.animation = false;

  function section(title, note) {
    const h = document.createElement('h2');
    h.textContent = title;
    root.appendChild(h);
    if (note) {
      const p = document.createElement('p');
      p.className = 'note';
      p.textContent = note;
      root.appendChild(p);
    }
  }

  function chart(type, labels, datasets, scales) {
    const box = document.createElement('div');
    box.className = 'chart';
    const canvas = document.createElement('canvas');
    box.appendChild(canvas);
    root.appendChild(box);
    datasets.forEach((d, i) => {
      d.borderColor = d.borderColor || colors[i % colors.length];
      d.backgroundColor = d.backgroundColor || colors[i % colors.length];
    });
    new Chart(canvas, {type: type, data: {labels: labels, datasets: datasets},
      options: {responsive: true, maintainAspectRatio: false, scales: scales || {}}});
  }

  function axis(title, position) {
    return {title: {display: true, text: title}, position: position || 'left', beginAtZero: true};
  }

  // Every array of objects under the report that satisfies test, with where it was found.
  function find(node, test, path, out) {
    if (Array.isArray(node)) {
      if (node.length && node.every(x => x && typeof x === 'object' && test(x))) {
        out.push({path: path, items: node});
        return out;
      }
      node.forEach((x, i) => find(x, test, path + '[' + i + ']', out));
    } else if (node && typeof node === 'object') {
      Object.keys(node).forEach(k => find(node[k], test, path ? path + '.' + k : k, out));
    }
    return out;
  }

  function timeline() {
    const t = report.timeline;
    if (!Array.isArray(t) || !t.length) {
      section('Throughput over time', 'This report has no timeline.');
      return;
    }
    section('Throughput over time', 'Images per second in each interval (left) and samples done (right), across the cluster.');
    chart('line', t.map(p => p.t_s + ' s'), [
      {label: 'images/s', data: t.map(p => p.images_per_s), yAxisID: 'y', pointRadius: 0},
      {label: 'samples done', data: t.map(p => p.samples), yAxisID: 'y1', pointRadius: 0},
      {label: 'quarantined', data: t.map(p => p.quarantined), yAxisID: 'y1', pointRadius: 0}
    ], {x: {title: {display: true, text: 'time since start'}}, y: axis('images/s'), y1: axis('samples', 'right')});
  }

  function stages() {
    const sets = find(report, s => typeof s.name === 'string' && s.latency_ms && typeof s.latency_ms === 'object', '', []);
    sets.forEach(set => {
      const names = set.items.map(s => s.name);
      const where = set.path === 'stages' ? '' : ' (' + set.path + ')';
      section('Stage latency' + where, 'Per item, in milliseconds.' + (report.stage_latency_note ? ' ' + report.stage_latency_note : ''));
      chart('bar', names, ['p50', 'p90', 'p99'].map(p => ({label: p, data: set.items.map(s => s.latency_ms[p])})),
        {y: axis('ms')});
      section('Queue occupancy and busy fraction' + where, 'Mean fill of the queue each stage writes to, and the share of time its workers were busy.');
      chart('bar', names, [
        {label: 'queue occupancy', data: set.items.map(s => s.queue_occupancy)},
        {label: 'busy fraction', data: set.items.map(s => s.busy_fraction)}
      ], {y: Object.assign(axis('fraction'), {max: 1})});
    });
  }

  function feeders() {
    const sets = find(report, f => f.stats && typeof f.stats === 'object' && 'h2d_gbps' in f.stats, '', []);
    sets.forEach(set => {
      const names = set.items.map(f => [f.executor, f.device].filter(x => x !== undefined).join(' '));
      section('Feeders: host-to-device bandwidth (' + set.path + ')');
      chart('bar', names, [
        {label: 'H2D GB/s while copying', data: set.items.map(f => f.stats.h2d_gbps)},
        {label: 'GB/s over the wall clock', data: set.items.map(f => f.stats.wall_gbps)}
      ], {y: axis('GB/s')});
      section('Feeders: trainer wait and producer blocked', 'Milliseconds per batch.');
      chart('bar', names, [
        {label: 'trainer wait ms/batch', data: set.items.map(f => f.stats.consumer_wait_ms_per_batch)},
        {label: 'producer blocked ms/batch', data: set.items.map(f => f.stats.producer_blocked_ms_per_batch)}
      ], {y: axis('ms')});
      set.items.forEach((f, i) => slots(f.stats.slots, names[i]));
    });
  }

  function slots(s, name) {
    if (!s || !Array.isArray(s.series) || !s.series.length || !Array.isArray(s.series_columns)) {
      return;
    }
    section('Feeder slots over time: ' + name, 'Ring slots in each state.');
    const cols = s.series_columns;
    chart('line', s.series.map(r => r[0] + ' ms'),
      cols.slice(1).map((c, k) => ({label: c, data: s.series.map(r => r[k + 1]), pointRadius: 0})),
      {y: axis('slots')});
  }

  function table(columns, rows) {
    const t = document.createElement('table');
    t.className = 'trainers';
    const head = t.createTHead().insertRow();
    columns.forEach(c => {
      const th = document.createElement('th');
      th.textContent = c.title;
      head.appendChild(th);
    });
    const body = t.createTBody();
    rows.forEach(r => {
      const tr = body.insertRow();
      columns.forEach(c => {
        const v = r[c.key];
        tr.insertCell().textContent = v === undefined || v === null ? '' :
          typeof v === 'number' && !Number.isInteger(v) ? v.toPrecision(4) : String(v);
      });
    });
    root.appendChild(t);
  }

  // train: per rank, how its trainer ended, waited, stepped and restarted (the last attempt's).
  function trainers() {
    const t = report.trainers;
    if (!Array.isArray(t) || !t.length || !t.every(x => x && typeof x === 'object' && 'rank' in x)) {
      return;
    }
    section('Trainers', 'Per rank, in the run\'s last attempt: seconds waiting for batches and on steps ' +
      '(its time with a batch, between its requests), the mean step; restarts of the run and the ' +
      'failures that were this rank\'s.' + (Array.isArray(report.restarts) && report.restarts.length ?
      ' Failed attempts: ' + report.restarts.length + ' (see "restarts" in the full report).' : ''));
    table([
      {key: 'rank', title: 'rank'}, {key: 'end', title: 'end'}, {key: 'exit_code', title: 'exit code'},
      {key: 'steps', title: 'steps'}, {key: 'step_s', title: 'step s (mean)'},
      {key: 'wait_s', title: 'wait s'}, {key: 'wall_s', title: 'wall s'},
      {key: 'restarts', title: 'restarts'}, {key: 'failures', title: 'failures'},
      {key: 'host', title: 'host'}, {key: 'executor', title: 'executor'}
    ], t);
    chart('bar', t.map(x => 'rank ' + x.rank), [
      {label: 'waiting for batches (s)', data: t.map(x => x.wait_s)},
      {label: 'on steps (s)', data: t.map(x => typeof x.step_s === 'number' ? x.step_s * x.steps : null)}
    ], {x: {stacked: true}, y: Object.assign(axis('seconds'), {stacked: true})});
  }

  timeline();
  trainers();
  stages();
  feeders();
  document.body.dataset.rendered = 'ok';
})();
