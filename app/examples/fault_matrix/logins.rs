//! The fault matrix's second section: bb with `--oauth` (the real binary, a child process) under three
//! floods of anonymous login traffic, while a person who logged in keeps calling a tool; afterwards
//! every person's refresh, and bb's peak memory. The rows say outcomes in words, judged against the
//! issue's bars (every call answered, p99 under 1 s, refreshes that work, under 256 MiB); the figures
//! behind them (latencies, counts, memory, durations) vary from run to run and go to stderr only.

#[path = "logins/attacks.rs"]
mod attacks;
#[path = "logins/person.rs"]
mod person;
#[path = "logins/wire.rs"]
mod wire;

use std::collections::BTreeSet;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use attacks::{ADDRESSES, Address, Attack, LONG_STATES, SLOW_PER_ADDRESS};
use bb_stack::{Stack, StackConfig};
use person::{Bb, Person};
use wire::KeptAlive;

/// The person's calls during an attack: this many, one every [`CALL_EVERY`].
const CALLS: usize = 80;
const CALL_EVERY: Duration = Duration::from_millis(100);
/// How long an attack runs before the person's first call.
const HEAD_START: Duration = Duration::from_secs(1);
/// The bar for the person's calls' 99th percentile.
const P99_BAR: Duration = Duration::from_secs(1);
/// The bar for bb's peak resident memory.
const MEMORY_BAR_KIB: u64 = 256 * 1024;
/// An address's burst of registrations and authorizations together (`shell-http` `admission::SIGN_UP`).
const SIGN_UP_BURST: usize = 60;
/// bb's deadline for a login body (`Limits::oauth_body_timeout`), and the slack a busy machine gets.
const BODY_DEADLINE: Duration = Duration::from_secs(5);
const SLACK: Duration = Duration::from_secs(3);

/// One attack's row, in words.
struct Row {
    refused: String,
    calls: String,
    refresh: String,
    memory: String,
}

/// Runs the three attacks, each against a fresh stand-in and bb; the section's Markdown.
pub fn render() -> String {
    let mut doc = String::from(HEADER);
    doc.push_str("| attack | what bb did with the attack's requests | the person's calls | refresh after | bb's peak memory under 256 MiB |\n");
    doc.push_str("|---|---|---|---|---|\n");
    for attack in Attack::all() {
        let r = row(attack);
        doc.push_str(&format!("| {} | {} | {} | {} | {} |\n", attack.label(), r.refused, r.calls, r.refresh, r.memory));
    }
    doc
}

fn row(attack: Attack) -> Row {
    let began = Instant::now();
    let stack = Stack::start(StackConfig::default()).expect("the stand-in starts");
    let bb = Bb::start(&stack);
    let log_in = |user: &str| Person::log_in(&bb, &stack, user).unwrap_or_else(|e| panic!("{user} logs in: {e}"));
    let (alice, carol) = (log_in("alice"), log_in("carol"));
    // Alice's client keeps its connection, as an HTTP client does; it is open before the attack.
    let mut kept = KeptAlive::new(Ipv4Addr::LOCALHOST, bb.addr);
    alice.call_on(&mut kept, &bb).unwrap_or_else(|e| panic!("alice's call before the attack: {e}"));

    let stop = AtomicBool::new(false);
    let attack_began = Instant::now();
    let (addresses, calls, fresh) = std::thread::scope(|s| {
        let attackers = s.spawn(|| attacks::run(attack, bb.addr, &stop));
        std::thread::sleep(HEAD_START);
        let fresh = s.spawn(|| calls(&bb, |bb| carol.call(bb)));
        let calls = calls(&bb, |bb| alice.call_on(&mut kept, bb));
        let fresh = fresh.join().expect("carol's calls end");
        stop.store(true, Ordering::Relaxed);
        (attackers.join().expect("the attackers' threads end"), calls, fresh)
    });
    let attacked = attack_began.elapsed();

    let alice_after = alice.refreshed(&bb);
    let carol_after = carol.refreshed(&bb);
    let called_after = alice_after.as_ref().map_err(String::clone).and_then(|a| a.call(&bb));
    let peak_kib = bb.peak_kib();

    let (refused, why) = judge(attack, &addresses, attacked);
    let (alice_calls, carol_calls) = (Calls::of(&calls), Calls::of(&fresh));
    let words = |c: &Calls| {
        if c.failed.is_empty() && c.p99 < P99_BAR {
            format!("all {CALLS} answered, p99 under 1 s")
        } else {
            let p99 = if c.p99 < P99_BAR { "under" } else { "over" };
            format!("**NO**: {} of {CALLS} answered, p99 {p99} 1 s", c.ok)
        }
    };
    let calls_words = format!("kept-alive: {}; fresh: {}", words(&alice_calls), words(&carol_calls));
    let refresh_words = match (&alice_after, &carol_after, &called_after) {
        (Ok(_), Ok(_), Ok(())) => "alice's and carol's: new tokens; alice's new token answers a call".to_string(),
        _ => "**NO**: a refresh or the call after it failed".to_string(),
    };
    let memory = if peak_kib < MEMORY_BAR_KIB { "yes" } else { "**NO**" }.to_string();

    eprintln!(
        "logins: {}: {:.1} s attacked ({:.1} s with logins and refreshes); requests sent {}, answers {:?}, \
         unanswered {}, longest open {} ms; bb's peak RSS {:.1} MiB",
        attack.label(),
        attacked.as_secs_f64(),
        began.elapsed().as_secs_f64(),
        addresses.iter().map(|a| a.sent).sum::<usize>(),
        attacks::statuses(&addresses),
        addresses.iter().map(|a| a.unanswered).sum::<usize>(),
        addresses.iter().map(|a| a.longest_open).max().unwrap_or_default().as_millis(),
        peak_kib as f64 / 1024.0,
    );
    eprintln!(
        "logins: {}: alice's calls on a kept-alive connection ({} opened): {alice_calls}",
        attack.label(),
        kept.opened
    );
    eprintln!("logins: {}: carol's calls, a fresh connection each: {carol_calls}", attack.label());
    for (what, e) in [("alice's refresh", alice_after.err()), ("carol's refresh", carol_after.err())]
        .into_iter()
        .chain(std::iter::once(("alice's call after it", called_after.err())))
    {
        if let Some(e) = e {
            eprintln!("logins: {}: {what} failed: {e}", attack.label());
        }
    }
    for e in alice_calls.failed.iter().take(5) {
        eprintln!("logins: {}: a call of alice's failed: {e}", attack.label());
    }
    if let Some(why) = why {
        eprintln!("logins: {}: {why}", attack.label());
    }
    if [&refused, &calls_words, &refresh_words, &memory].iter().any(|w| w.contains("**NO**")) {
        eprintln!("logins: {}: bb's log:\n{}", attack.label(), bb.stderr.lock().unwrap());
    }
    Row { refused, calls: calls_words, refresh: refresh_words, memory }
}

/// A person's calls, one every [`CALL_EVERY`] (or at once after a slower one): each one's latency,
/// or why it failed. They run on the calling thread alone, so none waits behind an attacker's
/// request in this program.
fn calls(bb: &Bb, mut call: impl FnMut(&Bb) -> Result<(), String>) -> Vec<Result<Duration, String>> {
    let first = Instant::now();
    (0..CALLS)
        .map(|i| {
            let at = first + CALL_EVERY * i as u32;
            std::thread::sleep(at.saturating_duration_since(Instant::now()));
            let start = Instant::now();
            call(bb).map(|()| start.elapsed())
        })
        .collect()
}

/// What a person's calls came to: how many were answered, their latencies' p50, p99 and longest, the
/// three slowest (by their order), and why the others failed.
struct Calls {
    ok: usize,
    p50: Duration,
    p99: Duration,
    max: Duration,
    slowest: Vec<(Duration, usize)>,
    failed: Vec<String>,
}

impl Calls {
    fn of(calls: &[Result<Duration, String>]) -> Calls {
        let mut latencies: Vec<Duration> = calls.iter().filter_map(|c| c.as_ref().ok().copied()).collect();
        latencies.sort();
        let mut slowest: Vec<(Duration, usize)> =
            calls.iter().enumerate().filter_map(|(i, c)| c.as_ref().ok().map(|d| (*d, i))).collect();
        slowest.sort_by(|a, b| b.cmp(a));
        slowest.truncate(3);
        Calls {
            ok: latencies.len(),
            p50: percentile(&latencies, 50),
            p99: percentile(&latencies, 99),
            max: latencies.last().copied().unwrap_or_default(),
            slowest,
            failed: calls.iter().filter_map(|c| c.as_ref().err().cloned()).collect(),
        }
    }
}

impl std::fmt::Display for Calls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |d: Duration| d.as_millis();
        let slowest: Vec<String> = self.slowest.iter().map(|(d, i)| format!("#{i} {} ms", ms(*d))).collect();
        write!(
            f,
            "{} of {CALLS} answered, p50 {} ms, p99 {} ms, max {} ms (slowest {})",
            self.ok,
            ms(self.p50),
            ms(self.p99),
            ms(self.max),
            slowest.join(", ")
        )?;
        if !self.failed.is_empty() {
            write!(f, "; {} failed", self.failed.len())?;
        }
        Ok(())
    }
}

/// The nearest-rank percentile `p` of sorted `values` (zero when there are none).
fn percentile(values: &[Duration], p: usize) -> Duration {
    if values.is_empty() {
        return Duration::ZERO;
    }
    let rank = (p * values.len()).div_ceil(100).max(1);
    values[rank - 1]
}

/// The attack's cell: what bb did with its requests, and, when that is not what bb should do, why.
fn judge(attack: Attack, addresses: &[Address], attacked: Duration) -> (String, Option<String>) {
    let problem = match attack {
        Attack::Registrations => registrations(addresses, attacked),
        Attack::Authorizations => authorizations(addresses, attacked),
        Attack::SlowBodies => slow_bodies(addresses),
    };
    let words = match attack {
        Attack::Registrations => {
            "every address: 201 for its first 60, then 429 `slow_down` (about one a second let through)"
        }
        Attack::Authorizations => {
            "every address: the consent page until its allowance of 60 (its registration and two 12 KB states \
             counted), then a 429 page; each 12 KB `state` refused with a 400 page"
        }
        Attack::SlowBodies => {
            "every slow body cut off: at once with 503 beyond the anonymous share (128 at once) or 429 beyond its \
             address's allowance, else with 408 at the 5 s deadline; none held longer"
        }
    };
    match problem {
        None => (format!("{words}: yes"), None),
        Some(why) => (format!("{words}: **NO**"), Some(why)),
    }
}

/// The kinds of answers an address got: status and what each said.
fn kinds(a: &Address) -> BTreeSet<(u16, &'static str)> {
    a.counts.keys().copied().collect()
}

/// How many requests an address may make in `attacked` after its burst (one a second), and one more.
fn allowance(attacked: Duration) -> usize {
    SIGN_UP_BURST + attacked.as_secs() as usize + 2
}

fn registrations(addresses: &[Address], attacked: Duration) -> Option<String> {
    let wanted: BTreeSet<(u16, &str)> = [(201, "json"), (429, "slow_down")].into();
    for (i, a) in addresses.iter().enumerate() {
        let (seen, admitted) = (kinds(a), a.with_status(201));
        if a.unanswered > 0 || !seen.is_subset(&wanted) || !seen.contains(&(429, "slow_down")) {
            return Some(format!("address {i}: {seen:?}, {} unanswered", a.unanswered));
        }
        if a.leading < SIGN_UP_BURST || admitted > allowance(attacked) {
            return Some(format!("address {i}: {} admitted first, {admitted} in all", a.leading));
        }
    }
    None
}

fn authorizations(addresses: &[Address], attacked: Duration) -> Option<String> {
    let wanted: BTreeSet<(u16, &str)> = [(200, "consent"), (429, "page")].into();
    for (i, a) in addresses.iter().enumerate() {
        if let Some(f) = &a.failed {
            return Some(format!("address {i}: {f}"));
        }
        if a.long_states.len() != LONG_STATES || a.long_states.iter().any(|g| (g.status, g.said) != (400, "page")) {
            return Some(format!("address {i}: the long states got {:?}", a.long_states));
        }
        let seen = kinds(a);
        if a.unanswered > 0 || !seen.is_subset(&wanted) || !seen.contains(&(429, "page")) {
            return Some(format!("address {i}: {seen:?}, {} unanswered", a.unanswered));
        }
        // Its registration and the long states came first, from the same allowance.
        let before = 1 + LONG_STATES;
        let admitted = before + a.with_status(200);
        if before + a.leading < SIGN_UP_BURST || admitted > allowance(attacked) {
            return Some(format!("address {i}: {} consent pages first, {admitted} admitted in all", a.leading));
        }
    }
    None
}

fn slow_bodies(addresses: &[Address]) -> Option<String> {
    let seen: BTreeSet<u16> = addresses.iter().flat_map(|a| a.counts.keys().map(|(s, _)| *s)).collect();
    if !seen.is_subset(&[408, 429, 503].into()) || !seen.contains(&408) || !seen.contains(&503) {
        return Some(format!("statuses {seen:?}"));
    }
    let longest = addresses.iter().map(|a| a.longest_open).max().unwrap_or_default();
    if longest > BODY_DEADLINE + SLACK {
        return Some(format!("a slow body's connection was open for {longest:?}"));
    }
    let (opened, unopened) = addresses.iter().fold((0, 0), |(o, u), a| (o + a.sent, u + a.unopened));
    if unopened > 0 || opened < ADDRESSES * SLOW_PER_ADDRESS {
        return Some(format!("{opened} slow bodies opened, {unopened} could not be"));
    }
    None
}

const HEADER: &str = "
## Logins under attack

bb with `--oauth` (the real binary, a child process, bb's defaults but `--max-connections 512`, so an anonymous share
of 128 login requests at once and 128 connections per address) against a fresh stand-in for each row.
Before each attack two people, alice and carol, log in fully from 127.0.0.1, each with their own client
registration and browser cookie (bb's registration, its consent page, Bitbucket's consent as the user, the
callback, the code exchanged with PKCE). Then one attack runs from the eight addresses 127.0.0.2–9 (to bb,
eight peers other than the people's), one thread per address, and after a second's head start alice's MCP
client calls `list_pr_comments` (a 2026-07-28 `tools/call` with her bearer token) 80 times, one every
100 ms, on the connection it opened before the attack and keeps alive, as an HTTP client does, on a thread
of its own (so no call of hers waits behind an attacker's request in this program); the attack stops when
her last call is answered (about 9 s). Beside her, carol's client makes the same calls on a fresh
connection each, as a client that does not keep connections does. (bb listens with a queue as deep as
the connections it may hold: with the standard library's 128, hundreds of attackers' connections arriving
at once overflowed it, the kernel dropped carol's connect, and her system sent it again a second later.)

- **registration flood**: each address sends `POST /oauth/register` on a kept-alive connection, the next as
  soon as the last is answered (at most 1,000,000 requests in all).
- **authorize flood**: each address registers a client, sends two `GET /oauth/authorize` with a 12 KB
  `state` (bb refuses a `state` over 1 KiB, so a login begun holds bounded bytes), then authorizations
  for its client as fast as bb answers, on a kept-alive connection.
- **600 slow bodies**: each address holds 75 connections, each sending the head of `POST /oauth/register`
  (every fourth `POST /oauth/token`) with `Content-Length: 1000` and then one byte a second; a connection
  bb answers or closes is opened again at the next second.

Columns: **what bb did with the attack's requests**: the answers every attacking address got, and whether
they were what bb's admission promises (`yes`). **the person's calls**: whether all 80 of alice's calls
(kept-alive) and all 80 of carol's (fresh connections) were answered (200, a result that is not an error)
with the 99th percentile of their latencies under 1 s (of 80 calls, that is the slowest).
**refresh after**: after the attack, alice's and carol's refresh tokens are exchanged at `/oauth/token`
(200 and new tokens), and alice's new access token answers a call. **bb's peak memory**: bb's peak
resident memory (`VmHWM`) at the end, under 256 MiB. The figures behind the words (requests sent and
their statuses, alice's and carol's p50, p99 and slowest calls, the peak in MiB, each row's duration)
vary from run to run, so they go to stderr, not here.

";
