//! The dataset (docs/dataset.md): its columns — names, order and types, declared once in the
//! tables below — and the rows of a run, one per sampling period of the active cluster, built
//! from the period's counters. Both backends write these rows, so `hetlab train` does not know
//! where the data came from.

use std::fmt::Write as _;
use std::io::Write;
use std::sync::Arc;

use super::{Chunk, Plan, Run, FREQ_CLUSTERS};
use crate::counters::ClusterCounters;

/// The counters of one sampling period of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Period {
    /// End of the period since the run's start, s.
    pub t_end_s: f64,
    pub period_s: f64,
    /// CCI cycle counter delta.
    pub cci_cycles: u64,
    /// Per cluster (platform order): its CCI port's counters; the active cluster's also hold
    /// the chase's core counters (the idle cluster runs nothing).
    pub clusters: Vec<ClusterCounters>,
}

/// One measured run: what the rows of a run are built from.
#[derive(Debug, Clone, Copy)]
pub struct RunRecord<'a> {
    pub chunk: &'a Chunk,
    pub run: &'a Run,
    /// Dependent loads the chase made.
    pub iterations: u64,
    pub run_time_s: f64,
    pub periods: &'a [Period],
}

/// A column's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    Int,
    Float,
}

/// One cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    Text(&'a str),
    Int(i64),
    Float(f64),
}

/// One column's values. Text repeats within a run; equal neighbours share one allocation.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    Text(Vec<Arc<str>>),
    Int(Vec<i64>),
    Float(Vec<f64>),
}

/// What one row is made of.
struct Row<'a> {
    backend: &'a str,
    plan: &'a Plan,
    record: &'a RunRecord<'a>,
    config_id: &'a str,
    period_index: usize,
    period: &'a Period,
}

type RowGet = for<'a> fn(&Row<'a>) -> Value<'a>;
type CountersGet = fn(&ClusterCounters) -> Value<'static>;

/// The run's identity and the period's timing, up to the frequency columns.
const HEAD: [(&str, Kind, RowGet); 7] = [
    ("backend", Kind::Text, |r| Value::Text(r.backend)),
    ("platform", Kind::Text, |r| Value::Text(&r.plan.platform)),
    ("platform_sha256", Kind::Text, |r| Value::Text(&r.plan.platform_sha256)),
    ("run_id", Kind::Int, |r| Value::Int(r.record.run.run_id as i64)),
    ("config_id", Kind::Text, |r| Value::Text(r.config_id)),
    ("active_cluster", Kind::Text, |r| Value::Text(&r.plan.clusters[r.record.chunk.active])),
    ("idle_cluster", Kind::Text, |r| Value::Text(&r.plan.clusters[r.plan.idle(r.record.chunk.active)])),
];

// Then `<cluster>_khz` for each of FREQ_CLUSTERS.

const BODY: [(&str, Kind, RowGet); 10] = [
    ("pattern", Kind::Text, |r| Value::Text(&r.record.chunk.pattern)),
    ("size_elements", Kind::Int, |r| Value::Int(r.record.chunk.size_elements as i64)),
    ("iterations", Kind::Int, |r| Value::Int(r.record.iterations as i64)),
    ("rep", Kind::Int, |r| Value::Int(i64::from(r.record.run.rep))),
    ("seed", Kind::Int, |r| Value::Int(r.record.run.seed as i64)),
    ("run_time_s", Kind::Float, |r| Value::Float(r.record.run_time_s)),
    ("period_index", Kind::Int, |r| Value::Int(r.period_index as i64)),
    ("t_end_s", Kind::Float, |r| Value::Float(r.period.t_end_s)),
    ("period_s", Kind::Float, |r| Value::Float(r.period.period_s)),
    ("cci_cycles", Kind::Int, |r| Value::Int(r.period.cci_cycles as i64)),
];

/// `<name>_<cluster>` for every cluster, platform order: that cluster's CCI slave port.
const PORT: [(&str, Kind, CountersGet); 3] = [
    ("si_rrq_hs_any", Kind::Int, |k| Value::Int(k.si_rrq_hs_any as i64)),
    ("si_rrq_stall_tt_full", Kind::Int, |k| Value::Int(k.si_rrq_stall_tt_full as i64)),
    ("cci_congestion", Kind::Float, |k| Value::Float(k.cci_congestion())),
];

/// The chase's core PMU counts over the period (its cluster is the active one).
const PROCESS: [(&str, Kind, CountersGet); 5] = [
    ("cpu_cycles", Kind::Int, |k| Value::Int(k.cpu_cycles as i64)),
    ("inst_retired", Kind::Int, |k| Value::Int(k.inst_retired as i64)),
    ("bus_access", Kind::Int, |k| Value::Int(k.bus_access as i64)),
    ("l2d_cache_refill", Kind::Int, |k| Value::Int(k.l2d_cache_refill as i64)),
    ("memory_access", Kind::Float, |k| Value::Float(k.memory_access())),
];

/// Where a column's values come from.
#[derive(Clone, Copy)]
enum Source {
    Row(RowGet),
    /// The frequency of FREQ_CLUSTERS[i].
    Khz(usize),
    /// A counter of cluster `c`'s port.
    Port(usize, CountersGet),
    Process(CountersGet),
}

impl Source {
    fn value<'a>(self, r: &Row<'a>) -> Value<'a> {
        match self {
            Source::Row(get) => get(r),
            Source::Khz(i) => Value::Int(i64::from(r.record.run.freqs_khz[i])),
            Source::Port(c, get) => get(&r.period.clusters[c]),
            Source::Process(get) => get(&r.period.clusters[r.record.chunk.active]),
        }
    }
}

/// Rows of the dataset, column-wise.
#[derive(Clone)]
pub struct Dataset {
    backend: String,
    names: Vec<String>,
    sources: Vec<Source>,
    columns: Vec<Values>,
    rows: usize,
}

/// Column names and types, in order, for clusters `clusters` (platform order).
pub fn schema(clusters: &[String]) -> Vec<(String, Kind)> {
    columns(clusters).into_iter().map(|(name, kind, _)| (name, kind)).collect()
}

fn columns(clusters: &[String]) -> Vec<(String, Kind, Source)> {
    let mut c: Vec<(String, Kind, Source)> = Vec::with_capacity(32);
    c.extend(HEAD.iter().map(|&(n, k, get)| (n.to_string(), k, Source::Row(get))));
    c.extend(FREQ_CLUSTERS.iter().enumerate().map(|(i, f)| (format!("{f}_khz"), Kind::Int, Source::Khz(i))));
    c.extend(BODY.iter().map(|&(n, k, get)| (n.to_string(), k, Source::Row(get))));
    for (i, cluster) in clusters.iter().enumerate() {
        c.extend(PORT.iter().map(|&(n, k, get)| (format!("{n}_{cluster}"), k, Source::Port(i, get))));
    }
    c.extend(PROCESS.iter().map(|&(n, k, get)| (n.to_string(), k, Source::Process(get))));
    c
}

impl Dataset {
    /// An empty dataset for clusters `clusters` (platform order), rows tagged with `backend`
    /// (`sim`, `linux`).
    pub fn new(clusters: &[String], backend: &str) -> Dataset {
        let (mut names, mut sources, mut values) = (Vec::new(), Vec::new(), Vec::new());
        for (name, kind, source) in columns(clusters) {
            names.push(name);
            sources.push(source);
            values.push(match kind {
                Kind::Text => Values::Text(Vec::new()),
                Kind::Int => Values::Int(Vec::new()),
                Kind::Float => Values::Float(Vec::new()),
            });
        }
        Dataset { backend: backend.to_string(), names, sources, columns: values, rows: 0 }
    }

    /// Appends the rows of one run: one per period.
    pub fn push_run(&mut self, plan: &Plan, record: &RunRecord<'_>) {
        let config_id = plan.config_id(record.chunk, record.run);
        for (period_index, period) in record.periods.iter().enumerate() {
            let row = Row { backend: &self.backend, plan, record, config_id: &config_id, period_index, period };
            for (source, column) in self.sources.iter().zip(self.columns.iter_mut()) {
                match (column, source.value(&row)) {
                    (Values::Text(v), Value::Text(s)) => match v.last() {
                        Some(last) if **last == *s => v.push(last.clone()),
                        _ => v.push(Arc::from(s)),
                    },
                    (Values::Int(v), Value::Int(x)) => v.push(x),
                    (Values::Float(v), Value::Float(x)) => v.push(x),
                    _ => unreachable!("a column's getter returns its declared kind"),
                }
            }
        }
        self.rows += record.periods.len();
    }

    /// Makes room for `rows` more rows in every column.
    pub fn reserve(&mut self, rows: usize) {
        for column in &mut self.columns {
            match column {
                Values::Text(v) => v.reserve(rows),
                Values::Int(v) => v.reserve(rows),
                Values::Float(v) => v.reserve(rows),
            }
        }
    }

    /// Appends `other`'s rows (same plan and backend).
    pub fn append(&mut self, other: Dataset) {
        debug_assert_eq!(self.names, other.names);
        for (mine, theirs) in self.columns.iter_mut().zip(other.columns) {
            match (mine, theirs) {
                (Values::Text(a), Values::Text(b)) => a.extend(b),
                (Values::Int(a), Values::Int(b)) => a.extend(b),
                (Values::Float(a), Values::Float(b)) => a.extend(b),
                _ => unreachable!("same schema"),
            }
        }
        self.rows += other.rows;
    }

    pub fn len(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// (name, values) per column, in order.
    pub fn into_columns(self) -> Vec<(String, Values)> {
        self.names.into_iter().zip(self.columns).collect()
    }

    /// Every row as a CSV record. Floats keep a decimal point or an exponent (`0.0`, `1e-7`),
    /// so a reader infers the same types as the columns have.
    pub fn write_csv_rows<W: Write>(&self, out: &mut csv::Writer<W>) -> csv::Result<()> {
        let mut field = String::with_capacity(32);
        for i in 0..self.rows {
            for column in &self.columns {
                field.clear();
                match column {
                    Values::Text(v) => field.push_str(&v[i]),
                    Values::Int(v) => write!(field, "{}", v[i]).expect("a String takes any text"),
                    Values::Float(v) => write!(field, "{:?}", v[i]).expect("a String takes any text"),
                }
                out.write_field(&field)?;
            }
            out.write_record(None::<&[u8]>)?;
        }
        Ok(())
    }
}

/// A CSV writer for the dataset's rows and header: a field is quoted only where it must be (a
/// platform file's cluster names, in the column names and the rows, are the user's).
pub fn csv_writer<W: Write>(out: W) -> csv::Writer<W> {
    csv::WriterBuilder::new().has_headers(false).from_writer(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;
    use crate::sweep::{Plan, SweepOptions};

    /// docs/dataset.md, in order.
    const COLUMNS: &str = "backend,platform,platform_sha256,run_id,config_id,active_cluster,idle_cluster,big_khz,little_khz,pattern,size_elements,iterations,rep,seed,run_time_s,period_index,t_end_s,period_s,cci_cycles,si_rrq_hs_any_little,si_rrq_stall_tt_full_little,cci_congestion_little,si_rrq_hs_any_big,si_rrq_stall_tt_full_big,cci_congestion_big,cpu_cycles,inst_retired,bus_access,l2d_cache_refill,memory_access";

    #[test]
    fn rows_have_exactly_the_dataset_columns_in_order() {
        let p = Platform::builtin("exynos5422").unwrap();
        let opts = SweepOptions { patterns: vec!["random".into()], sizes: vec![262144], seed: 3, ..Default::default() };
        let plan = Plan::new(&p, "ab", opts, vec![vec![1_400_000], vec![200_000]]).unwrap();
        let run = plan.runs(0).nth(1).unwrap();
        let port = |hs, stall| ClusterCounters { si_rrq_hs_any: hs, si_rrq_stall_tt_full: stall, ..Default::default() };
        let mut little = port(100, 5);
        (little.cpu_cycles, little.inst_retired, little.bus_access, little.l2d_cache_refill) = (1000, 10, 50, 4);
        let period = Period { t_end_s: 0.03, period_s: 0.01, cci_cycles: 9, clusters: vec![little, port(0, 0)] };
        let periods = [period.clone(), period];
        let record =
            RunRecord { chunk: &plan.chunks[0], run: &run, iterations: 1000, run_time_s: 0.5, periods: &periods };
        let mut d = Dataset::new(&plan.clusters, "linux");
        d.push_run(&plan, &record);
        assert_eq!(d.names().join(","), COLUMNS);
        assert_eq!(schema(&plan.clusters).len(), COLUMNS.split(',').count());
        assert_eq!(d.len(), 2);
        let mut csv = csv_writer(Vec::new());
        d.write_csv_rows(&mut csv).unwrap();
        let text = String::from_utf8(csv.into_inner().unwrap()).unwrap();
        let first = text.lines().next().unwrap();
        // seed = 3 + run_id 1; no reads on big's port: congestion 0.0, never NaN
        assert_eq!(first, "linux,exynos5422,ab,1,little-random-262144-200000-1400000,little,big,200000,1400000,random,262144,1000,1,4,0.5,0,0.03,0.01,9,100,5,0.05,0,0,0.0,1000,10,50,4,0.05");
        assert!(text.lines().nth(1).unwrap().contains(",0.5,1,0.03,"), "period_index counts up");
        // a name with the separator in it is quoted, not split
        let mut quoted = csv_writer(Vec::new());
        quoted.write_record(["big,fast", "say \"hi\""]).unwrap();
        assert_eq!(quoted.into_inner().unwrap(), b"\"big,fast\",\"say \"\"hi\"\"\"\n");
        let cols = d.into_columns();
        match &cols[0].1 {
            Values::Text(v) => assert!(Arc::ptr_eq(&v[0], &v[1]), "a run's text is shared"),
            _ => panic!("backend is text"),
        }
        assert!(cols.iter().all(|(_, v)| match v {
            Values::Text(v) => v.len() == 2,
            Values::Int(v) => v.len() == 2,
            Values::Float(v) => v.len() == 2,
        }));
    }
}
