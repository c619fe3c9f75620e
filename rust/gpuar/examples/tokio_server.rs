// SPDX-License-Identifier: MIT
//! A tokio server that answers TCP requests on 127.0.0.1 while it awaits
//! "GPU" work: the soft producer stands in for the device (a thread that
//! sleeps until just before each job's end, spins the rest and stores the
//! job's sequence number), and every await goes through the port's fd in
//! the same single-threaded runtime as the sockets. A client task sends
//! requests the whole time; at the end the program prints, per wait, the
//! latency from the store to the awaiting task's resumption and the
//! runtime thread's CPU time, and how many requests were answered.
//!
//!   tokio_server [--engine auto|user|kernel] [--waits N] [--work-us N]
//!                [--plan TEXT] [--no-imminent] [--verbose]
//!                [--waiter-cpu N --device-cpu N]
//!
//! The device and the runtime are pinned apart when both CPUs are given
//! (as gpuar-bench pins its simulated device and waiter).
use std::io::{Error as IoError, ErrorKind};
use std::time::Duration;

use gpuar::{AsyncPort, Engine, Plan, PortOptions, SoftProducer};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

struct Args {
    engine: Engine,
    waits: u64,
    work_us: u64,
    plan: Plan,
    imminent: bool,
    verbose: bool,
    waiter_cpu: Option<usize>,
    device_cpu: Option<usize>,
}

const PLAN: &str = "flag:park_us=50,backstop_us=100000+predict:margin_us=100,min_sleep_us=20,max_sleep_us=50000,window=8";

fn usage(why: &str) -> ! {
    eprintln!("tokio_server: {why}");
    eprintln!(
        "usage: tokio_server [--engine auto|user|kernel] [--waits N] [--work-us N] [--plan TEXT] \
         [--no-imminent] [--verbose] [--waiter-cpu N --device-cpu N]"
    );
    std::process::exit(2);
}

fn parse_args() -> Args {
    let mut a = Args {
        engine: Engine::Auto,
        waits: 2000,
        work_us: 1000,
        plan: PLAN.parse().expect("the default plan parses"),
        imminent: true,
        verbose: false,
        waiter_cpu: None,
        device_cpu: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().unwrap_or_else(|| usage(&format!("{name} needs a value")));
        let number = |name: &str, v: String| -> u64 {
            v.parse().unwrap_or_else(|_| usage(&format!("{name} {v:?}: not a number")))
        };
        match arg.as_str() {
            "--engine" => a.engine = value("--engine").parse().unwrap_or_else(|e: gpuar::Error| usage(e.message())),
            "--waits" => a.waits = number("--waits", value("--waits")).max(1),
            "--work-us" => a.work_us = number("--work-us", value("--work-us")),
            "--plan" => a.plan = value("--plan").parse().unwrap_or_else(|e: gpuar::Error| usage(e.message())),
            "--no-imminent" => a.imminent = false,
            "--verbose" | "-v" => a.verbose = true,
            "--waiter-cpu" => a.waiter_cpu = Some(number("--waiter-cpu", value("--waiter-cpu")) as usize),
            "--device-cpu" => a.device_cpu = Some(number("--device-cpu", value("--device-cpu")) as usize),
            other => usage(&format!("unknown option {other}")),
        }
    }
    if a.waiter_cpu.is_some() != a.device_cpu.is_some() {
        usage("--waiter-cpu and --device-cpu go together");
    }
    a
}

/// Pin the calling thread (threads it starts inherit the mask).
fn pin(cpu: usize) -> std::io::Result<()> {
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(IoError::last_os_error());
        }
    }
    Ok(())
}

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Answer each line "ping N" with "pong N".
async fn serve(listener: TcpListener) -> std::io::Result<()> {
    loop {
        let (sock, _) = listener.accept().await?;
        tokio::spawn(async move {
            let (r, mut w) = sock.into_split();
            let mut lines = BufReader::new(r).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let reply = match line.strip_prefix("ping ") {
                    Some(n) => format!("pong {n}\n"),
                    None => "error: expected \"ping N\"\n".to_owned(),
                };
                if w.write_all(reply.as_bytes()).await.is_err() {
                    break;
                }
            }
        });
    }
}

/// Send a request every 500 us until told to stop; returns the answers.
async fn client(addr: std::net::SocketAddr, stop: tokio::sync::watch::Receiver<bool>) -> std::io::Result<u64> {
    let sock = TcpStream::connect(addr).await?;
    let (r, mut w) = sock.into_split();
    let mut lines = BufReader::new(r).lines();
    let mut answered = 0u64;
    while !*stop.borrow() {
        w.write_all(format!("ping {answered}\n").as_bytes()).await?;
        let line = lines.next_line().await?.ok_or_else(|| IoError::new(ErrorKind::UnexpectedEof, "server closed"))?;
        if line != format!("pong {answered}") {
            return Err(IoError::new(ErrorKind::InvalidData, format!("unexpected answer {line:?}")));
        }
        answered += 1;
        tokio::time::sleep(Duration::from_micros(500)).await;
    }
    Ok(answered)
}

fn percentile(sorted: &[u64], p: usize) -> u64 {
    // Nearest rank, as gpuar-bench: sample ceil(p/100 * n).
    let rank = (p * sorted.len() + 99) / 100;
    sorted[rank.max(1) - 1]
}

fn main() {
    let args = parse_args();
    if let Some(cpu) = args.device_cpu {
        pin(cpu).unwrap_or_else(|e| usage(&format!("--device-cpu {cpu}: {e}")));
    }
    // The producer's thread inherits the device CPU.
    let producer = SoftProducer::new().unwrap_or_else(|e| fail(&e));
    if let Some(cpu) = args.waiter_cpu {
        pin(cpu).unwrap_or_else(|e| usage(&format!("--waiter-cpu {cpu}: {e}")));
    }
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
    if let Err(e) = rt.block_on(run(&args, &producer)) {
        eprintln!("tokio_server: {e}");
        std::process::exit(1);
    }
}

fn fail(e: &gpuar::Error) -> ! {
    eprintln!("tokio_server: {e}");
    std::process::exit(1);
}

async fn run(args: &Args, producer: &SoftProducer) -> std::io::Result<()> {
    let port = PortOptions::new(args.engine).imminent(args.imminent).open()?;
    if let Some(w) = port.warning() {
        println!("note: {w}");
    }
    let port = AsyncPort::new(port)?;
    println!(
        "engine: {}, imminent readiness: {}, plan: {}",
        port.port().engine().name(),
        port.port().imminent(),
        args.plan
    );
    let line = port.port().line()?;
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    println!("serving on {addr}");
    let server = tokio::spawn(serve(listener));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let client = tokio::spawn(client(addr, stop_rx));

    let mut latency = Vec::with_capacity(args.waits as usize);
    let mut cpu = Vec::with_capacity(args.waits as usize);
    for i in 1..=args.waits {
        producer.store_after(&line, 0, i, args.work_us * 1000)?;
        let cpu0 = thread_cpu_ns();
        let rec = port.wait(&line, 0, i, &args.plan)?.await?;
        let seen = gpuar::now_ns();
        let cpu_ns = thread_cpu_ns() - cpu0;
        let stored = producer
            .stored_at(&line, 0, i)?
            .ok_or_else(|| IoError::new(ErrorKind::Other, format!("wait {i} ended before its store")))?;
        let lat = seen.saturating_sub(stored);
        if args.verbose {
            println!(
                "wait {i}: {} latency {:.1} us (detected {:.1} us) cpu {:.1} us",
                rec.outcome.name(),
                lat as f64 / 1e3,
                rec.complete_ns.saturating_sub(stored) as f64 / 1e3,
                cpu_ns as f64 / 1e3
            );
        }
        latency.push(lat);
        cpu.push(cpu_ns);
    }
    stop_tx.send(true).ok();
    let answered = client.await.map_err(|e| IoError::new(ErrorKind::Other, e))??;
    server.abort();
    latency.sort_unstable();
    cpu.sort_unstable();
    let us = |ns: u64| ns as f64 / 1e3;
    println!(
        "waits {}: latency p50 {:.2} us, p90 {:.2} us, p99 {:.2} us, max {:.2} us; \
         runtime thread CPU per wait p50 {:.1} us (work {} us)",
        latency.len(),
        us(percentile(&latency, 50)),
        us(percentile(&latency, 90)),
        us(percentile(&latency, 99)),
        us(*latency.last().unwrap()),
        us(percentile(&cpu, 50)),
        args.work_us
    );
    println!("requests answered meanwhile: {answered}");
    if answered == 0 {
        return Err(IoError::new(ErrorKind::Other, "the server answered no request"));
    }
    Ok(())
}
