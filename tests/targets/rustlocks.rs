// SPDX-License-Identifier: GPL-2.0
//! Rust std's own locks (futex-based, linked into the program): Mutex,
//! Condvar and RwLock, each a static the report names.
//!
//!   rustlocks [--iters N] [--hold-us N] [--truth FILE]
//!
//! Each iteration: a holder keeps MUTEX --hold-us while the main thread
//! blocks in lock() (path "mutex"); the main thread waits on CONDVAR
//! until the holder notifies it --hold-us later, after releasing the
//! mutex (path "condvar"); the holder keeps RWLOCK for writing while the
//! main thread blocks in read() (path "read"), then for reading while it
//! blocks in write() (path "write"); last, the main thread parks until
//! the holder unparks it (path "park": its own kind, park, in a
//! row apart).  The main thread's clock (Instant:
//! CLOCK_MONOTONIC) around each call is the truth: {"pid", "objects":
//! {"MUTEX", "CONDVAR", "RWLOCK"}, "paths": {NAME: {"count", "wait_ns"}}}.
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Condvar, Mutex, RwLock};
use std::time::{Duration, Instant};
use std::{env, fs, thread};

static MUTEX: Mutex<u64> = Mutex::new(0);
static CONDVAR: Condvar = Condvar::new();
static RWLOCK: RwLock<u64> = RwLock::new(0);
static PHASE: AtomicI32 = AtomicI32::new(0);
static UNPARKED: AtomicBool = AtomicBool::new(false);
static MAIN_TID: AtomicI32 = AtomicI32::new(0);

/// Until the main thread sleeps in the futex system call (or about a
/// second): every measured call then blocks, even on a loaded machine.
fn wait_blocked_in_futex() {
    let path = format!("/proc/self/task/{}/syscall", MAIN_TID.load(Ordering::SeqCst));
    for _ in 0..20000 {
        if let Ok(text) = fs::read_to_string(&path) {
            if text.split(' ').next() == Some("202") {
                return;
            }
        }
        thread::sleep(Duration::from_micros(50));
    }
}

const PATHS: [&str; 5] = ["mutex", "condvar", "read", "write", "park"];

fn wait_phase(value: i32) {
    while PHASE.load(Ordering::SeqCst) < value {
        thread::sleep(Duration::from_micros(50));
    }
}

fn holder(iters: i32, hold: Duration, main: thread::Thread) {
    for i in 0..iters {
        let base = 8 * i;
        let guard = MUTEX.lock().unwrap();
        PHASE.store(base + 1, Ordering::SeqCst);
        wait_blocked_in_futex();
        thread::sleep(hold);
        drop(guard);
        wait_phase(base + 2);
        wait_blocked_in_futex();
        thread::sleep(hold);
        *MUTEX.lock().unwrap() = 1;
        CONDVAR.notify_one();
        wait_phase(base + 3);
        let w = RWLOCK.write().unwrap();
        PHASE.store(base + 4, Ordering::SeqCst);
        wait_blocked_in_futex();
        thread::sleep(hold);
        drop(w);
        wait_phase(base + 5);
        let r = RWLOCK.read().unwrap();
        PHASE.store(base + 6, Ordering::SeqCst);
        wait_blocked_in_futex();
        thread::sleep(hold);
        drop(r);
        wait_phase(base + 7);
        wait_blocked_in_futex();
        thread::sleep(hold);
        UNPARKED.store(true, Ordering::SeqCst);
        main.unpark();
        wait_phase(base + 8);
    }
}

fn main() {
    let args: Vec<String> = env::args().collect();
    let (mut iters, mut hold_us, mut truth) = (20, 3000u64, None);
    let mut i = 1;
    while i + 1 < args.len() {
        match args[i].as_str() {
            "--iters" => iters = args[i + 1].parse().unwrap(),
            "--hold-us" => hold_us = args[i + 1].parse().unwrap(),
            "--truth" => truth = Some(args[i + 1].clone()),
            _ => std::process::exit(2),
        }
        i += 2;
    }
    let hold = Duration::from_micros(hold_us);
    let pause = Duration::from_micros(hold_us / 10);
    let mut wait = [0u128; 5];
    let mut count = [0u64; 5];
    let tid = fs::read_link("/proc/thread-self").unwrap();
    MAIN_TID.store(tid.file_name().unwrap().to_str().unwrap().parse().unwrap(), Ordering::SeqCst);
    let main = thread::current();
    let helper = thread::spawn(move || holder(iters, hold, main));
    for i in 0..iters {
        let base = 8 * i;
        wait_phase(base + 1);
        thread::sleep(pause);
        let t0 = Instant::now();
        let mut guard = MUTEX.lock().unwrap(); // CALLSITE:mutex
        wait[0] += t0.elapsed().as_nanos();
        count[0] += 1;
        *guard = 0;
        PHASE.store(base + 2, Ordering::SeqCst);
        let t0 = Instant::now();
        while *guard == 0 {
            guard = CONDVAR.wait(guard).unwrap(); // CALLSITE:condvar
        }
        wait[1] += t0.elapsed().as_nanos();
        count[1] += 1;
        drop(guard);
        PHASE.store(base + 3, Ordering::SeqCst);
        wait_phase(base + 4);
        thread::sleep(pause);
        let t0 = Instant::now();
        let r = RWLOCK.read().unwrap(); // CALLSITE:read
        wait[2] += t0.elapsed().as_nanos();
        count[2] += 1;
        drop(r);
        PHASE.store(base + 5, Ordering::SeqCst);
        wait_phase(base + 6);
        thread::sleep(pause);
        let t0 = Instant::now();
        let w = RWLOCK.write().unwrap(); // CALLSITE:write
        wait[3] += t0.elapsed().as_nanos();
        count[3] += 1;
        drop(w);
        PHASE.store(base + 7, Ordering::SeqCst);
        let t0 = Instant::now();
        while !UNPARKED.swap(false, Ordering::SeqCst) {
            thread::park(); // CALLSITE:park
        }
        wait[4] += t0.elapsed().as_nanos();
        count[4] += 1;
        PHASE.store(base + 8, Ordering::SeqCst);
    }
    helper.join().unwrap();
    if let Some(path) = truth {
        let paths: Vec<String> = (0..5)
            .map(|p| format!("\"{}\": {{\"count\": {}, \"wait_ns\": {}}}", PATHS[p], count[p], wait[p]))
            .collect();
        let text = format!(
            "{{\"pid\": {}, \"objects\": {{\"MUTEX\": \"{:p}\", \"CONDVAR\": \"{:p}\", \"RWLOCK\": \"{:p}\"}}, \"paths\": {{{}}}}}\n",
            std::process::id(), &MUTEX, &CONDVAR, &RWLOCK, paths.join(", "));
        fs::write(path, text).unwrap();
    }
}
