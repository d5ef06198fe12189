//! Model files (`docs/models.md`, `docs/timing.md` §4): the embedded default, round
//! trips, one test per kind of error (each names its file and line), and malformed files made
//! at random, which must always give `Ok` or a clear `Err`, never a panic.

use mpsim_proto::collective::{AlgorithmChoices, Collective};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use mpsim_sim::{BspTiming, ComputeMode, CpuModel, DelayTable, Model, ModelFile, ModelFileError};
use proptest::prelude::*;

const GOOD_TOML: &str = r#"# a test model
[meta]
description = "test"

[network]
ssend_table = "ssend.csv"
bsend_table = "bsend.csv"
ack_latency = "200ns"
eager_threshold = "1KiB"
bsend_overhead = "0B"
system_buffer = "1MiB"
poll_cost = "1us"

[compute]
mode = "ignored"
flops_per_s = 2.5e9
host_to_target = 0.5

[bsp]
g = "0.25ns/byte"
l = "3us"
"#;

const GOOD_SSEND: &str = "size_bytes,delay_ns\n0,1300\n1024,2300\n";
const GOOD_BSEND: &str = "# bsend\nsize_bytes,delay_ns\n\n0,1000\n1024,2000\n";

/// A fresh directory under Cargo's scratch space for integration tests.
fn scratch(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("model_file-{}", std::process::id()))
        .join(format!("{name}-{}", N.fetch_add(1, Ordering::Relaxed)));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// A model directory with these three files.
fn model_dir(name: &str, toml: &[u8], ssend: &[u8], bsend: &[u8]) -> PathBuf {
    let dir = scratch(name);
    fs::write(dir.join("model.toml"), toml).expect("write");
    fs::write(dir.join("ssend.csv"), ssend).expect("write");
    fs::write(dir.join("bsend.csv"), bsend).expect("write");
    dir
}

fn good() -> PathBuf {
    model_dir(
        "good",
        GOOD_TOML.as_bytes(),
        GOOD_SSEND.as_bytes(),
        GOOD_BSEND.as_bytes(),
    )
}

/// Loads a model whose TOML is `toml` (good tables) and returns the error's message.
fn toml_error(toml: &str) -> (PathBuf, String) {
    let dir = model_dir(
        "bad-toml",
        toml.as_bytes(),
        GOOD_SSEND.as_bytes(),
        GOOD_BSEND.as_bytes(),
    );
    let e = Model::load(&dir).expect_err("should not load");
    (dir.join("model.toml"), e.to_string())
}

/// Loads a model whose bsend table is `csv` (good TOML) and returns the error's message.
fn csv_error(csv: &str) -> (PathBuf, String) {
    let dir = model_dir(
        "bad-csv",
        GOOD_TOML.as_bytes(),
        GOOD_SSEND.as_bytes(),
        csv.as_bytes(),
    );
    let e = Model::load(&dir).expect_err("should not load");
    (dir.join("bsend.csv"), e.to_string())
}

fn assert_at(got: &(PathBuf, String), line: usize, words: &str) {
    let (file, msg) = got;
    let at = format!("{}:{line}: ", file.display());
    assert!(msg.starts_with(&at), "`{msg}` should start with `{at}`");
    assert!(msg.contains(words), "`{msg}` should say `{words}`");
    assert!(!msg.contains('\n'), "one line: `{msg}`");
}

/// Replaces the whole line that starts with `key` in the good TOML.
fn with_line(key: &str, line: &str) -> String {
    GOOD_TOML
        .lines()
        .map(|l| if l.starts_with(key) { line } else { l })
        .collect::<Vec<_>>()
        .join("\n")
}

// --- the embedded default -------------------------------------------------------------------

#[test]
fn default_files_are_default_machine() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/default");
    assert_eq!(Model::load(&dir).expect("loads"), Model::default_machine());
    assert_eq!(
        Model::load(dir.join("model.toml")).expect("loads"),
        Model::default_machine()
    );
}

#[test]
fn embedded_default_is_default_machine_and_says_how_it_was_measured() {
    let f = ModelFile::embedded_default().expect("embedded default loads");
    assert_eq!(f.model, Model::default_machine());
    let d = f.description.expect("a description");
    assert!(
        d.contains("Open MPI 4.1.4") && d.contains("2026-11-23"),
        "{d}"
    );
    assert_eq!(
        ModelFile::open("default")
            .expect("`default` names it")
            .model,
        Model::default_machine()
    );
}

// --- reading and round trips ----------------------------------------------------------------

#[test]
fn a_full_file_reads_every_parameter() {
    let f = ModelFile::load(good()).expect("loads");
    let m = f.model;
    assert_eq!(m.ssend.points(), &[(0, 1300), (1024, 2300)]);
    assert_eq!(m.bsend.points(), &[(0, 1000), (1024, 2000)]);
    assert_eq!(m.ack_latency_ns, 200);
    assert_eq!(m.eager_threshold, 1024);
    assert_eq!(m.bsend_overhead, 0);
    assert_eq!(m.system_buffer, Some(1 << 20));
    assert_eq!(m.poll_cost_ns, 1000);
    assert_eq!(m.compute, ComputeMode::Ignored);
    assert_eq!(m.flops_per_s, 2_500_000_000);
    assert_eq!(m.host_to_target_ppm, 500_000);
    assert_eq!(m.bsp_g_ps_per_byte, Some(250));
    assert_eq!(m.bsp_l_ns, Some(3000));
    assert_eq!(f.description.as_deref(), Some("test"));
}

#[test]
fn optional_keys_take_the_spec_defaults() {
    let dir = model_dir(
        "minimal",
        b"[network]\nssend_table = \"ssend.csv\"\nbsend_table = \"bsend.csv\"\nack_latency = 150\n",
        GOOD_SSEND.as_bytes(),
        GOOD_BSEND.as_bytes(),
    );
    let m = Model::load(&dir).expect("loads");
    let d = Model::default_machine();
    assert_eq!(m.ack_latency_ns, 150);
    assert_eq!(
        (
            m.eager_threshold,
            m.bsend_overhead,
            m.system_buffer,
            m.poll_cost_ns
        ),
        (65_536, d.bsend_overhead, None, 100)
    );
    assert_eq!(
        (m.compute, m.flops_per_s),
        (ComputeMode::Modeled, d.flops_per_s)
    );
    assert_eq!((m.bsp_g_ps_per_byte, m.bsp_l_ns), (None, None));
}

#[test]
fn from_toml_str_reads_tables_from_base_dir() {
    let dir = good();
    let m = Model::from_toml_str(GOOD_TOML, &dir).expect("loads");
    assert_eq!(m, Model::load(&dir).expect("loads"));
}

#[test]
fn default_machine_round_trips() {
    let dir = scratch("rt-default");
    Model::default_machine().write_to(&dir).expect("writes");
    assert_eq!(Model::load(&dir).expect("loads"), Model::default_machine());
}

#[test]
fn a_described_model_file_round_trips() {
    let f = ModelFile::embedded_default().expect("loads");
    let dir = scratch("rt-file");
    f.write_to(&dir).expect("writes");
    let back = ModelFile::load(&dir).expect("loads");
    assert_eq!((back.model, back.description), (f.model, f.description));
}

#[test]
fn a_model_the_format_cannot_hold_is_not_written() {
    let m = Model {
        host_to_target_ppm: 0,
        ..Model::default_machine()
    };
    let e = m.write_to(scratch("unrepresentable")).expect_err("ppm 0");
    assert!(matches!(e, ModelFileError::Unrepresentable { .. }), "{e}");
}

fn arb_table() -> impl Strategy<Value = DelayTable> {
    prop::collection::vec((1u64..1 << 40, 1u64..=u64::MAX), 1..8).prop_map(|steps| {
        let mut x = 0u64;
        let points = steps
            .into_iter()
            .map(|(dx, y)| {
                x = x.saturating_add(dx);
                (x, y)
            })
            .collect();
        DelayTable::new("t", points).expect("increasing")
    })
}

fn arb_model() -> impl Strategy<Value = Model> {
    (
        (arb_table(), arb_table()),
        (1u64..=u64::MAX, any::<usize>(), any::<usize>()),
        (any::<Option<usize>>(), 1u64..=u64::MAX, 1u64..=u64::MAX),
        (0..3u8, 1u64..=1_000_000_000_000),
        (any::<Option<u64>>(), any::<Option<u64>>()),
        (
            (any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>()),
            (proptest::option::of(1u32..), any::<u64>()),
            0u64..=1_000_000_000_000,
        ),
        (any::<bool>(), 0usize..5, 0usize..4),
    )
        .prop_map(
            |(
                (ssend, bsend),
                (ack_latency_ns, bsend_overhead, eager_threshold),
                (system_buffer, poll_cost_ns, flops_per_s),
                (mode, host_to_target_ppm),
                (bsp_g_ps_per_byte, bsp_l_ns),
                (
                    (send_overhead_ns, recv_overhead_ns, wake_latency_ns, measure_overhead_ns),
                    (cores, handover_ns),
                    concurrent_slowdown_ppm,
                ),
                (reproducible, coll, algo),
            )| Model {
                ssend,
                bsend,
                ack_latency_ns,
                bsend_overhead,
                eager_threshold,
                system_buffer,
                poll_cost_ns,
                flops_per_s,
                compute: [
                    ComputeMode::Modeled,
                    ComputeMode::Measured,
                    ComputeMode::Ignored,
                ][mode as usize],
                host_to_target_ppm,
                bsp_g_ps_per_byte,
                bsp_l_ns,
                bsp_timing: if bsp_g_ps_per_byte.is_some_and(|g| g % 2 == 0) {
                    BspTiming::Cost
                } else {
                    BspTiming::P2p
                },
                cpu: CpuModel {
                    send_overhead_ns,
                    recv_overhead_ns,
                    cores,
                    wake_latency_ns,
                    handover_ns,
                    measure_overhead_ns,
                    concurrent_slowdown_ppm,
                },
                collectives: {
                    // Nothing, or one collective's algorithm, with or without reproducible.
                    let mut c = AlgorithmChoices::default();
                    c.reproducible = reproducible;
                    if let Some(&coll) = [
                        Collective::Allreduce,
                        Collective::Bcast,
                        Collective::ReduceScatter,
                        Collective::Alltoall,
                    ]
                    .get(coll)
                    {
                        let algos = coll.algorithms();
                        c.set(coll, Some(algos[algo % algos.len()]))
                            .expect("its own algorithm");
                    }
                    c
                },
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_model_round_trips(m in arb_model()) {
        let dir = scratch("rt-any");
        m.write_to(&dir).expect("writes");
        prop_assert_eq!(Model::load(&dir).expect("loads"), m);
    }
}

// --- each error names its file and line -----------------------------------------------------

#[test]
fn toml_syntax_error() {
    let got = toml_error(&with_line("poll_cost", "poll_cost = \"1us"));
    assert_at(&got, 12, "");
}

#[test]
fn unknown_key_is_an_error() {
    let got = toml_error(&with_line("poll_cost", "pol_cost = \"1us\""));
    assert_at(&got, 12, "pol_cost");
}

#[test]
fn unknown_section_is_an_error() {
    let got = toml_error(&format!("{GOOD_TOML}\n[gpu]\ncores = 4\n"));
    assert_at(&got, 23, "gpu");
}

#[test]
fn missing_key_is_an_error() {
    let got = toml_error(&with_line("ack_latency", ""));
    assert!(got.1.contains("ack_latency"), "{}", got.1);
    assert!(
        got.1.starts_with(&format!("{}:", got.0.display())),
        "{}",
        got.1
    );
}

#[test]
fn duplicate_key_shows_its_line() {
    let got = toml_error(&with_line(
        "poll_cost",
        "poll_cost = \"1us\"\npoll_cost = \"2us\"",
    ));
    assert_at(&got, 13, "duplicate key: `poll_cost = \"2us\"`");
}

#[test]
fn a_table_written_as_an_array_of_tables_gets_a_hint() {
    let got = toml_error(&GOOD_TOML.replace("[network]", "[[network]]"));
    assert!(
        got.1.contains(
            "`[[network]]` (an array of tables: write `[network]`, with single brackets)"
        ),
        "{}",
        got.1
    );
}

#[test]
fn wrong_type_is_an_error() {
    let got = toml_error(&with_line("ssend_table", "ssend_table = 5"));
    assert_at(&got, 6, "string");
}

#[test]
fn wrong_type_names_the_key_and_echoes_a_number_as_written() {
    let got = toml_error(&with_line("ssend_table", "ssend_table = 1e300"));
    assert_at(
        &got,
        6,
        "`network.ssend_table`: invalid type: floating point `1e300`, expected a string",
    );
}

#[test]
fn unknown_unit_is_an_error() {
    let got = toml_error(&with_line("ack_latency", "ack_latency = \"200 parsecs\""));
    assert_at(&got, 8, "`network.ack_latency`: unknown unit `parsecs`");
}

#[test]
fn a_size_unit_on_a_time_is_an_error() {
    let got = toml_error(&with_line("poll_cost", "poll_cost = \"1KiB\""));
    assert_at(&got, 12, "unknown unit `KiB`");
}

#[test]
fn fraction_of_a_nanosecond_is_an_error() {
    let got = toml_error(&with_line("ack_latency", "ack_latency = \"0.5ns\""));
    assert_at(&got, 8, "whole number of ns");
}

#[test]
fn zero_ack_latency_is_an_error() {
    let got = toml_error(&with_line("ack_latency", "ack_latency = 0"));
    assert_at(&got, 8, "`network.ack_latency`: must be > 0");
}

#[test]
fn negative_value_is_an_error() {
    let got = toml_error(&with_line("eager_threshold", "eager_threshold = -1"));
    assert_at(&got, 9, "negative");
    let got = toml_error(&with_line("flops_per_s", "flops_per_s = -2.5e9"));
    assert_at(&got, 16, "negative");
}

#[test]
fn huge_value_is_an_error() {
    let got = toml_error(&with_line("l =", "l = \"99999999999999999999s\""));
    assert_at(&got, 21, "too large");
}

#[test]
fn unknown_compute_mode_is_an_error() {
    let got = toml_error(&with_line("mode", "mode = \"fast\""));
    assert_at(&got, 15, "`compute.mode`: `fast` is not a mode");
}

#[test]
fn bad_system_buffer_is_an_error() {
    let got = toml_error(&with_line("system_buffer", "system_buffer = \"infinite\""));
    assert_at(&got, 11, "(or \"unbounded\")");
}

#[test]
fn missing_table_names_its_path_and_the_key() {
    let got = toml_error(&with_line("bsend_table", "bsend_table = \"nowhere.csv\""));
    assert_at(&got, 7, "`bsend_table`: cannot read");
    assert!(got.1.contains("nowhere.csv"), "{}", got.1);
}

#[test]
fn missing_model_file_names_its_path() {
    let dir = scratch("empty");
    let e = Model::load(dir.join("model.toml")).expect_err("missing");
    let msg = e.to_string();
    assert!(
        msg.contains("model.toml") && msg.contains("cannot read"),
        "{msg}"
    );
}

#[test]
fn model_not_utf8_is_an_error() {
    let dir = model_dir(
        "not-utf8",
        b"[network]\n\xff\xfe = 1\n",
        GOOD_SSEND.as_bytes(),
        GOOD_BSEND.as_bytes(),
    );
    let e = Model::load(&dir).expect_err("not UTF-8");
    assert_at(&(dir.join("model.toml"), e.to_string()), 2, "not UTF-8");
    assert_eq!(e.line(), Some(2));
}

// --- inputs that are not model files: endless, huge, binary ----------------------------------

#[cfg(target_os = "linux")]
#[test]
fn a_table_that_is_dev_zero_is_refused_at_once_naming_its_key() {
    let toml = with_line("ssend_table", "ssend_table = \"/dev/zero\"");
    let got = toml_error(&toml);
    assert_at(&got, 6, "`ssend_table`: /dev/zero: binary data");
    assert!(got.1.ends_with("not a delay table"), "{}", got.1);
}

#[cfg(target_os = "linux")]
#[test]
fn a_model_file_that_is_dev_zero_is_refused_at_once() {
    let e = ModelFile::load("/dev/zero").expect_err("not a model");
    assert_eq!(
        e.to_string(),
        "/dev/zero: binary data (a NUL byte on line 1), not a model file"
    );
    assert_eq!(e.file(), Some(Path::new("/dev/zero")));
}

/// A file of `text` and a long comment line, followed by zeros up to `len` bytes without
/// writing them (sparse). The comment keeps the zeros past the start the reader sniffs for
/// binary data, so it is the size that is refused.
fn padded(path: &Path, text: &str, len: u64) {
    fs::write(path, format!("{text}\n#{}\n", "-".repeat(16 << 10))).expect("write");
    fs::OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|f| f.set_len(len))
        .expect("extend");
}

#[test]
fn a_table_over_64_mib_is_not_a_delay_table() {
    let dir = good();
    padded(&dir.join("bsend.csv"), GOOD_BSEND, (64 << 20) + 1);
    let e = Model::load(&dir).expect_err("too large");
    let msg = e.to_string();
    let want = format!(
        "`bsend_table`: {}: more than 64 MiB, not a delay table",
        dir.join("bsend.csv").display()
    );
    assert!(msg.ends_with(&want), "{msg}");
    assert_eq!(e.line(), Some(7));
}

#[test]
fn a_model_file_over_64_mib_is_not_a_model_file() {
    let dir = good();
    padded(&dir.join("model.toml"), GOOD_TOML, (64 << 20) + 1);
    let e = Model::load(&dir).expect_err("too large");
    assert_eq!(
        e.to_string(),
        format!(
            "{}: more than 64 MiB, not a model file",
            dir.join("model.toml").display()
        )
    );
}

// --- numbers beyond TOML's or the model's range name the key and the limit ------------------

#[test]
fn cores_beyond_u32_name_the_key_and_the_limit() {
    let line = GOOD_TOML.lines().count() + 3;
    for (cores, want) in [
        (
            "18446744073709551615",
            "`cpu.cores`: `18446744073709551615` is too large: at most 4294967295 (or \"unlimited\")",
        ),
        (
            "4294967296",
            "`cpu.cores`: `4294967296` is too large: at most 4294967295 (or \"unlimited\")",
        ),
        (
            "18446744073709551616",
            "`cpu.cores`: `18446744073709551616` is too large: at most 4294967295 (or \"unlimited\")",
        ),
        (
            "999999999999999999999999999999999999999999",
            "`cpu.cores`: `9999999999999999999999999999999999999999…` is too large: at most 4294967295",
        ),
        (
            "-9223372036854775809",
            "`cpu.cores`: `-9223372036854775809` is negative",
        ),
        ("0", "`cpu.cores`: must be > 0 (or \"unlimited\")"),
    ] {
        let got = toml_error(&with_cpu(&format!("cores = {cores}")));
        assert_at(&got, line, want);
    }
    let most = with_cpu("cores = 4294967295");
    let dir = model_dir(
        "cores-max",
        most.as_bytes(),
        GOOD_SSEND.as_bytes(),
        GOOD_BSEND.as_bytes(),
    );
    assert_eq!(Model::load(&dir).expect("loads").cpu.cores, Some(u32::MAX));
}

#[test]
fn extreme_factors_are_echoed_short_with_the_limit() {
    for (value, want) in [
        (
            "1e-300",
            "`compute.host_to_target`: `1e-300` rounds to 0 (it is kept in whole millionths); must be > 0",
        ),
        (
            "1e300",
            "`compute.host_to_target`: `1e300` is too large: at most 1000000",
        ),
        (
            "1e400",
            "`compute.host_to_target`: `1e400` is too large: at most 1000000",
        ),
        ("0.0", "`compute.host_to_target`: must be > 0"),
    ] {
        let got = toml_error(&with_line(
            "host_to_target",
            &format!("host_to_target = {value}"),
        ));
        assert_at(&got, 17, want);
        assert!(got.1.ends_with(want), "{}", got.1);
    }
}

#[test]
fn a_value_far_beyond_the_limit_in_a_string_is_too_large() {
    let got = toml_error(&with_line(
        "l =",
        "l = \"99999999999999999999999999999999999999999999s\"",
    ));
    assert_at(&got, 21, "is too large: at most 18446744073709551615ns");
}

#[test]
fn table_sizes_not_increasing() {
    let got = csv_error("size_bytes,delay_ns\n8,100\n64,200\n64,300\n");
    assert_at(
        &got,
        4,
        "sizes must strictly increase: 64 comes after 64 (line 3)",
    );
    let got = csv_error("8,100\n4,200\n");
    assert_at(&got, 2, "4 comes after 8 (line 1)");
}

#[test]
fn table_zero_delay() {
    let got = csv_error("# comment\nsize_bytes,delay_ns\n8,100\n\n64,0\n");
    assert_at(&got, 5, "delays must be > 0");
}

#[test]
fn table_negative_and_huge_numbers() {
    let got = csv_error("size_bytes,delay_ns\n-8,100\n");
    assert_at(&got, 2, "`size_bytes` is negative");
    let got = csv_error("size_bytes,delay_ns\n8,100000000000000000000000\n");
    assert_at(&got, 2, "`delay_ns` is too large");
}

#[test]
fn table_units_are_not_numbers() {
    let got = csv_error("size_bytes,delay_ns\n8,1us\n");
    assert_at(&got, 2, "`delay_ns` must be a whole number");
}

#[test]
fn table_wrong_field_count() {
    let got = csv_error("size_bytes,delay_ns\n8,100\n64,200,300\n");
    assert_at(&got, 3, "expected 2 fields");
}

#[test]
fn table_bad_header() {
    let got = csv_error("size,delay\n8,100\n");
    assert_at(&got, 1, "the header must be `size_bytes,delay_ns`");
}

#[test]
fn table_empty() {
    let got = csv_error("");
    assert_at(&got, 1, "has no rows");
    let got = csv_error("size_bytes,delay_ns\n# nothing measured\n");
    assert_at(&got, 1, "has no rows");
}

#[test]
fn errors_expose_file_and_line() {
    let dir = model_dir(
        "accessors",
        GOOD_TOML.as_bytes(),
        b"8,100\n8,200\n",
        GOOD_BSEND.as_bytes(),
    );
    let e = Model::load(&dir).expect_err("bad ssend");
    assert_eq!(e.file(), Some(dir.join("ssend.csv").as_path()));
    assert_eq!(e.line(), Some(2));
    assert!(matches!(e, ModelFileError::Table { .. }));
}

// --- malformed files at random: never a panic -----------------------------------------------

/// One way to spoil a file.
#[derive(Clone, Debug)]
enum Mutation {
    /// Overwrite the byte at (index mod len).
    Byte(usize, u8),
    /// Insert bytes at (index mod len + 1).
    Insert(usize, Vec<u8>),
    /// Keep only the first (n mod len + 1) bytes... or none.
    Truncate(usize),
    /// Swap two lines.
    SwapLines(usize, usize),
    /// Replace one line with a hostile one.
    Line(usize, String),
    /// Replace the value of one `key = value` line (or one CSV field) with a hostile one.
    Value(usize, String),
    /// Empty the file.
    Empty,
}

fn hostile_text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("-1".to_string()),
        Just("-9223372036854775808".to_string()),
        Just("18446744073709551616".to_string()),
        Just("99999999999999999999999999999999999999999999".to_string()),
        Just("1e400".to_string()),
        Just("1e300".to_string()),
        Just("1e-300".to_string()),
        Just("4294967296".to_string()),
        Just("18446744073709551615".to_string()),
        Just("340282366920938463463374607431768211456".to_string()),
        Just("nan".to_string()),
        Just("\"12 parsecs\"".to_string()),
        Just("\"1.5ns\"".to_string()),
        Just("\"0.000000000000000000000000000000001s\"".to_string()),
        Just("\"\"".to_string()),
        Just("[1, 2]".to_string()),
        Just("{ a = 1 }".to_string()),
        Just("1979-05-27T07:32:00Z".to_string()),
        "[ -~]{0,20}",
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Byte(i, b)),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(i, b)| Mutation::Insert(i, b)),
        (any::<usize>(), hostile_text()).prop_map(|(i, s)| Mutation::Insert(i, s.into_bytes())),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        (
            any::<usize>(),
            hostile_text(),
            prop::sample::select(vec![
                "ack_latency = ",
                "eager_threshold = ",
                "system_buffer = ",
                "flops_per_s = ",
                "host_to_target = ",
                "g = ",
                "l = ",
                "mode = ",
                "bsend_table = ",
                "cores = ",
                "concurrent_slowdown = ",
                "",
                "8,",
                ","
            ])
        )
            .prop_map(|(i, s, key)| Mutation::Line(i, format!("{key}{s}"))),
        (any::<usize>(), hostile_text()).prop_map(|(i, s)| Mutation::Value(i, s)),
        (any::<usize>(), hostile_text()).prop_map(|(i, s)| Mutation::Value(i, s)),
        Just(Mutation::Empty),
    ]
}

fn apply(file: &[u8], m: &Mutation) -> Vec<u8> {
    let mut f = file.to_vec();
    let len = f.len().max(1);
    match m {
        Mutation::Byte(i, b) => {
            if !f.is_empty() {
                f[i % len] = *b;
            }
        }
        Mutation::Insert(i, bytes) => {
            let at = (i % len + 1).min(f.len());
            f.splice(at..at, bytes.iter().copied());
        }
        Mutation::Truncate(n) => f.truncate(n % (len + 1)),
        Mutation::SwapLines(a, b) => {
            let mut lines: Vec<&[u8]> = file.split(|&c| c == b'\n').collect();
            let n = lines.len();
            lines.swap(a % n, b % n);
            f = lines.join(&b'\n');
        }
        Mutation::Line(i, text) => {
            let mut lines: Vec<Vec<u8>> = file.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect();
            let n = lines.len();
            lines[i % n] = text.clone().into_bytes();
            f = lines.join(&b'\n');
        }
        Mutation::Value(i, text) => {
            let mut lines: Vec<Vec<u8>> = file.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect();
            let values: Vec<usize> = (0..lines.len())
                .filter(|&k| lines[k].contains(&b'=') || lines[k].contains(&b','))
                .collect();
            if !values.is_empty() {
                let line = &mut lines[values[i % values.len()]];
                let sep = if line.contains(&b'=') { b'=' } else { b',' };
                let at = line.iter().position(|&c| c == sep).map_or(0, |p| p + 1);
                line.truncate(at);
                if sep == b'=' {
                    line.push(b' ');
                }
                line.extend_from_slice(text.trim_matches('"').as_bytes());
                if sep == b'=' && i % 2 == 0 {
                    // Half the time as a TOML string, so units are read.
                    line.insert(at + 1, b'"');
                    line.push(b'"');
                }
                f = lines.join(&b'\n');
            }
        }
        Mutation::Empty => f.clear(),
    }
    f
}

/// The `[cpu]` section of the TOML the fuzz test spoils, so that its keys are spoilt too.
const FUZZ_CPU: &str = "send_overhead = \"300ns\"\ncores = 2\nconcurrent_slowdown = 0.09";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Spoiled model files always load to `Ok` or to an `Err` that names a file (and, for
    /// anything inside a file, `file:line:`) on one line.
    #[test]
    fn malformed_files_never_panic(
        toml_edits in prop::collection::vec(mutation(), 0..3),
        ssend_edits in prop::collection::vec(mutation(), 0..3),
        bsend_edits in prop::collection::vec(mutation(), 0..3),
    ) {
        let spoil = |text: &str, edits: &[Mutation]| {
            edits.iter().fold(text.as_bytes().to_vec(), |f, m| apply(&f, m))
        };
        let dir = model_dir(
            "fuzz",
            &spoil(&with_cpu(FUZZ_CPU), &toml_edits),
            &spoil(GOOD_SSEND, &ssend_edits),
            &spoil(GOOD_BSEND, &bsend_edits),
        );
        let result = std::panic::catch_unwind(|| ModelFile::load(&dir));
        prop_assert!(result.is_ok(), "load panicked");
        if let Ok(Err(e)) = result {
            let msg = e.to_string();
            let file = e.file().expect("names a file");
            prop_assert!(file.starts_with(&dir), "{}", msg);
            prop_assert!(msg.starts_with(&file.display().to_string()), "{}", msg);
            if let Some(line) = e.line() {
                prop_assert!(line >= 1);
                let at = format!("{}:{line}: ", file.display());
                prop_assert!(msg.starts_with(&at), "{}", msg);
            }
            prop_assert!(!msg.contains('\n'), "one line: {}", msg);
            // What a message echoes of the files is cut short (no 300-digit numbers).
            let echoed = msg.len() - file.display().to_string().len();
            prop_assert!(echoed < 300, "{} characters: {}", echoed, msg);
        }
        let _ = fs::remove_dir_all(&dir);
    }
}

#[test]
fn table_lines_count_comments_blank_lines_and_crlf() {
    let got = csv_error("# a\n# b\n\n8,100\n  \n\n#c\n4,100\n");
    assert_at(&got, 8, "4 comes after 8 (line 4)");
    let got = csv_error("size_bytes,delay_ns\r\n8,100\r\n\r\n16,0\r\n");
    assert_at(&got, 4, "delays must be > 0");
}

// --- the [cpu] section (extensions X1-X3) ------------------------------------------------------

/// The good TOML with a `[cpu]` section of `body` appended; its first key is on line 24.
fn with_cpu(body: &str) -> String {
    format!("{GOOD_TOML}\n[cpu]\n{body}\n")
}

#[test]
fn cpu_section_reads_every_extension() {
    let toml = with_cpu(
        "send_overhead = \"300ns\"\nrecv_overhead = \"0.2us\"\ncores = 2\n\
         wake_latency = \"3us\"\nhandover = \"0.4us\"\nmeasure_overhead = 700\n\
         concurrent_slowdown = 0.09",
    );
    let dir = model_dir(
        "cpu-good",
        toml.as_bytes(),
        GOOD_SSEND.as_bytes(),
        GOOD_BSEND.as_bytes(),
    );
    let m = Model::load(&dir).expect("loads");
    assert_eq!(
        m.cpu,
        CpuModel {
            send_overhead_ns: 300,
            recv_overhead_ns: 200,
            cores: Some(2),
            wake_latency_ns: 3000,
            handover_ns: 400,
            measure_overhead_ns: 700,
            concurrent_slowdown_ppm: 90_000,
        }
    );
    let again = scratch("cpu-rt");
    m.write_to(&again).expect("writes");
    assert_eq!(Model::load(&again).expect("loads back"), m);
}

#[test]
fn cpu_section_is_optional_and_defaults_to_nothing() {
    assert_eq!(Model::load(good()).expect("loads").cpu, CpuModel::default());
    let unlimited = with_cpu("cores = \"unlimited\"");
    let dir = model_dir(
        "cpu-unlimited",
        unlimited.as_bytes(),
        GOOD_SSEND.as_bytes(),
        GOOD_BSEND.as_bytes(),
    );
    assert_eq!(Model::load(&dir).expect("loads").cpu.cores, None);
}

#[test]
fn bad_cpu_values_name_file_and_line() {
    let line = GOOD_TOML.lines().count() + 3;
    for (body, words) in [
        ("cores = 0", "cpu.cores"),
        ("cores = -2", "negative"),
        ("cores = \"many\"", "unlimited"),
        ("cores = 1.5", "cpu.cores"),
        ("cores = 99999999999", "cpu.cores"),
        ("send_overhead = \"5 parsecs\"", "cpu.send_overhead"),
        ("recv_overhead = \"-1ns\"", "negative"),
        ("wake_latency = true", "cpu.wake_latency"),
        ("measure_overhead = \"0.5ns\"", "whole number"),
        ("sendoverhead = \"1ns\"", "sendoverhead"),
        ("concurrent_slowdown = -0.1", "negative"),
        ("concurrent_slowdown = \"10%\"", "cpu.concurrent_slowdown"),
        ("concurrent_slowdown = 2e6", "at most"),
    ] {
        let got = toml_error(&with_cpu(body));
        assert_at(&got, line, words);
    }
}
