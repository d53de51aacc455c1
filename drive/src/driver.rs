//! The drive loop: feeds the core [`Server`] with the time and carries out what it asks for.
//!
//! After every input the driver drains [`Server::poll_output`] (str0m's rule; this is the one place
//! outside the core that does). Messages go to the shell as [`Delivery`]s; each Bitbucket read runs
//! on bb's bounded pool of read threads ([`Process::reads`](crate::Process::reads)) with a [`Cancel`] of its own, and its outcome goes to the `on_fetched`
//! callback the shell gave, which feeds it back as [`Input::Fetched`]. A GET identical to one in
//! flight for the same credentials is not made again: it waits for that one ([`SharedReads`]).
//! The driver holds no lock: the stdio shell owns it in its event loop, the HTTP shell behind one
//! mutex per shard.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bb_core::{
    FetchOutcome, FetchRequest, Input, Level, Output, Said, Server, ServerConfig, SessionId, Ticket, limits,
};
use bb_core::{HighlightJob, Highlighted};
use bb_core::{Joined, Method, ReadKey};

use crate::audit::AuditTrail;
use crate::cancel::Cancel;
use crate::log::Logger;
use crate::process::Process;
use crate::reach::{Bitbucket, Lane, PersonalToken, Requester};
use crate::room::Asked;
use crate::shared_reads::{OnFetched, SharedReads, credential};

/// The current wall-clock time in epoch milliseconds: the only clock bb-core ever sees.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// What the shell frames and sends: the core's [`Output::Send`] and [`Output::Done`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// One JSON-RPC message (a single line, no newline) for a session's client.
    Send {
        /// Whose client it goes to.
        session: SessionId,
        /// The tag of the input it answers; `None` for a message tied to no input (a log notification).
        tag: Option<u64>,
        /// The message as JSON text.
        message: Vec<u8>,
        /// What it says (an error, a tool's error, an unchanged view), as the core wrote it.
        said: Said,
    },
    /// Every message answering the input tagged `tag` has been delivered (possibly none).
    Done {
        /// The session the input came on.
        session: SessionId,
        /// The tag the shell gave the input.
        tag: u64,
    },
}

/// A Bitbucket request a call waits for.
struct Fetching {
    session: SessionId,
    waits: Waits,
}

/// How a call waits for its request.
enum Waits {
    /// For a request of its own (a write) on the pool; setting the cancel before it starts means it never starts.
    Alone(Cancel),
    /// In a shared read it leads or follows; leaving it cancels the read only if nobody else waits.
    Shared,
}

/// Owns the core [`Server`] and the reads it started. Method classes: input ([`Driver::open`],
/// [`Driver::feed`], [`Driver::close`]), each ending in a drain that calls `deliver`; getters
/// ([`Driver::server`], [`Driver::person`]).
pub struct Driver {
    server: Server,
    /// The application's metrics and memory budget, shared with every driver it was handed to.
    process: Process,
    bitbucket: Arc<dyn Bitbucket>,
    logger: Logger,
    on_fetched: OnFetched,
    /// This driver's number in its process, naming its calls' room in the process's [`crate::Room`].
    id: u64,
    /// This driver's number among the drivers sharing `reads`, naming its tickets there.
    reader: u64,
    reads: SharedReads,
    fetching: HashMap<Ticket, Fetching>,
    persons: HashMap<SessionId, PersonalToken>,
    queues: HashMap<SessionId, u64>,
    /// CPU work the core asked for, by ticket, with the deadline the core gave it (epoch
    /// milliseconds), until a step is fed at or past it.
    work: HashMap<Ticket, u64>,
    /// Work to step, in the order asked.
    work_queue: VecDeque<Ticket>,
    /// The core's timers ([`Output::Timer`]) not yet fed: each one's time, epoch milliseconds.
    timers: HashMap<Ticket, u64>,
    /// Where a job's outcome and a call's deadline go when the shell takes them ([`Driver::on_wake`]);
    /// without it, jobs run at once on the driver's thread.
    wake: Option<Arc<dyn Fn(Wake) + Send + Sync>>,
    /// Jobs to run at once (no `wake`), in the order asked.
    jobs: VecDeque<(Ticket, Box<HighlightJob>)>,
    /// Jobs handed to bb's threads for CPU work and not back yet: a cancel drops one not started.
    computing: HashMap<Ticket, Cancel>,
    /// Large calls' room in the process's memory ([`Room`]), held or waited for, by ticket.
    rooms: std::collections::HashSet<Ticket>,
    /// Verdicts on rooms to hand to the core once the outputs at hand are carried out.
    admissions: VecDeque<(Ticket, bool)>,
    /// What the ledger answered for confirmations spent, to feed back.
    spends: VecDeque<(Ticket, bb_core::Spent)>,
    /// The audit trail, when the process keeps one ([`Process::with_audit`]): each record the core
    /// emits becomes a line, and a call's answer is delivered only once its record is queued; while
    /// the sink is [`crate::Audit::refusing`], the core refuses tool calls.
    audit: Option<AuditTrail>,
    /// Audit lines the writer's queue had no room for, and every delivery after the first of them,
    /// in order: delivered once the writer makes room ([`Wake::AuditRoom`]).
    held: VecDeque<Held>,
    /// The writer was asked to say when it has room.
    room_asked: bool,
}

/// What waits for room in the audit trail's queue.
enum Held {
    Line(Vec<u8>),
    Delivery(Delivery),
}

/// Something for the driver that happened on another thread: a job's outcome, or a call's deadline.
/// The shell hands it back with [`Driver::wake`].
#[derive(Debug)]
pub enum Wake {
    /// A job the core asked for with [`Output::Compute`] is done.
    Computed(Ticket, Highlighted),
    /// The deadline of the call whose work is `ticket` has passed.
    Deadline(Ticket),
    /// A large call's room ([`bb_core::Output::Admit`]) is granted, or never will be.
    Admitted(Ticket, bool),
    /// A shared ledger ([`crate::Ledger::blocks`]) answered for a confirmation spent ([`Output::Spend`]).
    Spent(Ticket, bb_core::Spent),
    /// The audit trail's writer has room again: what was held for it goes on.
    AuditRoom,
    /// The time the core asked for with [`Output::Timer`] has come.
    Timer(Ticket),
}

/// After how long a job on bb's threads for CPU work counts as stuck ([`limits::JOB_STUCK_AFTER_MS`]).
const STUCK_AFTER: Duration = Duration::from_millis(limits::JOB_STUCK_AFTER_MS);

/// The queue a session's reads wait in for a slot ([`Requester::queue`]): its person's in
/// per-person mode (the top bit set), else one of its own, numbered by `process` (whose pools,
/// room and client the queue waits in).
fn queue_for(person: Option<&PersonalToken>, process: &Process) -> u64 {
    match person {
        Some(_) => credential(person),
        None => process.number() & !(1 << 63),
    }
}

/// Who is behind a person's session, as a confirmation's state is bound to it
/// ([`Server::set_principal`]): `user:<name>` for a login that names its Bitbucket user, else
/// `token:` and the first 32 hex digits of the token's SHA-256 (never the token itself).
pub fn principal(person: &PersonalToken) -> String {
    match person.user() {
        Some(user) => format!("user:{user}"),
        None => {
            let digest = ring::digest::digest(&ring::digest::SHA256, person.secret().as_bytes());
            let hex: String = digest.as_ref().iter().take(16).map(|b| format!("{b:02x}")).collect();
            format!("token:{hex}")
        }
    }
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver")
            .field("sessions", &self.server.sessions())
            .field("fetching", &self.fetching.len())
            .finish()
    }
}

impl Driver {
    /// A driver over a new server for `config` and `process`'s caches, counting in and taking room of
    /// `process` (the application's, shared with its other drivers). `on_fetched` is called on a read thread
    /// with each read's outcome (never for a cancelled one); the shell feeds it back as
    /// [`Input::Fetched`] and must not call it while it holds the driver. Its reads are shared
    /// among its own sessions; [`Driver::share_reads`] shares them with other drivers.
    pub fn new(
        config: ServerConfig,
        process: Process,
        bitbucket: Arc<dyn Bitbucket>,
        logger: Logger,
        on_fetched: impl Fn(Ticket, FetchOutcome) + Send + Sync + 'static,
    ) -> Driver {
        let reads = SharedReads::new();
        let audit = process.audit().cloned();
        let mut config = config;
        // A process that keeps an audit trail has every call recorded.
        config.audit |= audit.is_some();
        Driver {
            server: Server::new(config, process.caches().clone()),
            id: process.number(),
            reader: reads.member(),
            reads,
            process,
            bitbucket,
            logger,
            on_fetched: Arc::new(on_fetched),
            fetching: HashMap::new(),
            persons: HashMap::new(),
            queues: HashMap::new(),
            work: HashMap::new(),
            work_queue: VecDeque::new(),
            timers: HashMap::new(),
            wake: None,
            jobs: VecDeque::new(),
            computing: HashMap::new(),
            rooms: std::collections::HashSet::new(),
            admissions: VecDeque::new(),
            spends: VecDeque::new(),
            audit,
            held: VecDeque::new(),
            room_asked: false,
        }
    }

    /// Tells the core whether the audit trail refuses calls, before an input.
    fn audit_state(&mut self) {
        if let Some(trail) = &self.audit {
            self.server.set_audit_failing(trail.sink().refusing());
        }
    }

    /// Hands `d` to the shell, or holds it behind an audit line that waits for room.
    fn pass(&mut self, d: Delivery, deliver: &mut dyn FnMut(Delivery)) {
        if self.held.is_empty() {
            deliver(d);
        } else {
            self.held.push_back(Held::Delivery(d));
        }
    }

    /// Makes the line of an audit record and queues it, or holds it (and what follows) for room.
    fn audit_record(&mut self, session: SessionId, record: &bb_core::AuditEvent) {
        let Some(trail) = &self.audit else { return };
        let person = self.persons.get(&session);
        let user = person.and_then(|p| p.user().map(str::to_owned));
        let fallback = person.map(principal);
        let line = trail.line(session, record, user, fallback, &self.logger, now_ms());
        if self.held.is_empty() {
            match trail.sink().offer(line) {
                Ok(()) => return,
                Err(line) => self.held.push_back(Held::Line(line)),
            }
        } else {
            self.held.push_back(Held::Line(line));
        }
        self.ask_room();
    }

    /// Asks the writer to wake the driver when it has room (once per wait).
    fn ask_room(&mut self) {
        if self.room_asked {
            return;
        }
        let (Some(trail), Some(wake)) = (&self.audit, self.wake.clone()) else { return };
        self.room_asked = true;
        trail.sink().when_room(Box::new(move || wake(Wake::AuditRoom)));
    }

    /// Queues what was held for room, and delivers what followed it, until the queue is full again.
    fn release_held(&mut self, deliver: &mut dyn FnMut(Delivery)) {
        let Some(trail) = self.audit.clone() else { return };
        while let Some(h) = self.held.pop_front() {
            match h {
                Held::Delivery(d) => deliver(d),
                Held::Line(line) => {
                    if let Err(line) = trail.sink().offer(line) {
                        self.held.push_front(Held::Line(line));
                        self.ask_room();
                        return;
                    }
                }
            }
        }
    }

    /// Shares this driver's reads in flight with every driver given `reads` (before any session
    /// opens): they must reach the same Bitbucket. An identical GET for the same credentials that
    /// one of them has in flight is then not made again.
    pub fn share_reads(mut self, reads: &SharedReads) -> Driver {
        self.reads = reads.clone();
        self.reader = reads.member();
        self
    }

    /// The core server, read-only: its sessions' negotiated versions, clients and calls in flight.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The application's metrics and memory budget this driver counts in and takes room of.
    pub fn process(&self) -> &Process {
        &self.process
    }

    /// The person a session acts for, in per-person mode.
    pub fn person(&self, session: SessionId) -> Option<&PersonalToken> {
        self.persons.get(&session)
    }

    /// Where the core's log lines go; the shell writes its own lines there too.
    pub fn logger(&self) -> &Logger {
        &self.logger
    }

    /// Opens a session whose reads carry `person`'s token (or the operator's credentials when `None`).
    pub fn open(&mut self, person: Option<PersonalToken>, deliver: &mut dyn FnMut(Delivery)) -> SessionId {
        let session = self.server.open();
        self.queues.insert(session, queue_for(person.as_ref(), &self.process));
        if let Some(person) = person {
            self.server.set_principal(session, principal(&person));
            self.logger.hide(person.secret());
            self.persons.insert(session, person);
        }
        self.drain(deliver);
        session
    }

    /// Gives `session` its person's token as it is now (a login's token after Bitbucket renewed it):
    /// reads started from now on carry it. Reads in flight keep the token they started with.
    pub fn set_person(&mut self, session: SessionId, person: PersonalToken) {
        if let Some(old) = self.persons.get(&session)
            && *old != person
        {
            self.logger.unhide(old.secret());
            self.logger.hide(person.secret());
            self.server.set_principal(session, principal(&person));
            self.persons.insert(session, person);
        }
    }

    /// Hands `input` to the server at the current time, then carries out everything it asks for.
    /// The outcome of a read cancelled meanwhile is dropped unseen.
    pub fn feed(&mut self, input: Input<'_>, deliver: &mut dyn FnMut(Delivery)) {
        if let Input::Fetched { ticket, .. } = &input
            && self.fetching.remove(ticket).is_none()
        {
            return;
        }
        self.audit_state();
        self.server.handle(input, now_ms());
        self.drain(deliver);
    }

    /// Closes a session: its calls are dropped unanswered (each input still owed ends in a
    /// [`Delivery::Done`] with no message) and every read it started is cancelled.
    pub fn close(&mut self, session: SessionId, deliver: &mut dyn FnMut(Delivery)) {
        self.server.close(session);
        self.drain(deliver);
        self.queues.remove(&session);
        if let Some(person) = self.persons.remove(&session) {
            self.logger.unhide(person.secret());
        }
        let orphans: Vec<Ticket> =
            self.fetching.iter().filter(|(_, f)| f.session == session).map(|(t, _)| *t).collect();
        for ticket in orphans {
            self.cancel(ticket);
        }
    }

    /// Has the driver hand jobs to bb's threads for CPU work and keep each call's deadline on a timer:
    /// `wake` is called on those threads with each job's outcome and each deadline, and the shell hands
    /// it back with [`Driver::wake`] (it must not call it while it holds the driver). Without this, jobs
    /// run at once on the driver's thread and a call waits for all of them.
    pub fn on_wake(mut self, wake: impl Fn(Wake) + Send + Sync + 'static) -> Driver {
        self.wake = Some(Arc::new(wake));
        self
    }

    /// Takes what [`Driver::on_wake`]'s callback was given, then carries out what the core asks for.
    pub fn wake(&mut self, wake: Wake, deliver: &mut dyn FnMut(Delivery)) {
        self.audit_state();
        match wake {
            Wake::AuditRoom => {
                self.room_asked = false;
                self.release_held(deliver);
            }
            Wake::Computed(ticket, done) => {
                self.computing.remove(&ticket);
                self.server.handle(Input::Computed { ticket, done }, now_ms());
            }
            Wake::Admitted(ticket, granted) => self.server.handle(Input::Admitted { ticket, granted }, now_ms()),
            Wake::Spent(ticket, spent) => self.server.handle(Input::Spent { ticket, spent }, now_ms()),
            Wake::Timer(ticket) => {
                // A timer cancelled meanwhile (its subscription ended) is gone from the map.
                let Some(at_ms) = self.timers.remove(&ticket) else { return };
                // Kept on the monotonic clock: the time has come even if the wall clock says a moment less.
                self.server.handle(Input::Timer { ticket }, now_ms().max(at_ms));
            }
            Wake::Deadline(ticket) => {
                // A call answered before its deadline has had its work cancelled, and a step fed past
                // it has had its deadline handled (Output::PastDeadline): nothing to do.
                let Some(deadline_ms) = self.work.get(&ticket).copied() else { return };
                self.work_queue.retain(|t| *t != ticket);
                // The timer kept the time on the monotonic clock: the deadline has come even if the
                // wall clock says a moment less.
                self.server.handle(Input::Work { ticket }, now_ms().max(deadline_ms));
            }
        }
        self.drain(deliver);
    }

    /// Runs a job on bb's threads for CPU work, in the queue of the session's person (or the
    /// session), in turn with the others' as reads are; its outcome goes to `wake`. A job cancelled
    /// before a thread takes it never runs. With no `wake` (tests), it runs on this thread once the
    /// outputs at hand are carried out. Never on the driver's thread otherwise: past
    /// [`limits::QUEUED_JOBS`] waiting, or [`limits::QUEUED_JOBS_PER_QUEUE`] of one queue's, the job
    /// is not run and its call answers plain at its deadline.
    fn compute(&mut self, session: SessionId, ticket: Ticket, job: Box<HighlightJob>) {
        let Some(wake) = self.wake.clone() else {
            self.jobs.push_back((ticket, job));
            return;
        };
        let (pool, jobs) = (self.process.compute(), self.process.jobs());
        let stuck = pool.stuck() as u64;
        if stuck > jobs.stuck_seen.swap(stuck, Ordering::Relaxed) {
            self.logger.log(
                Level::Warning,
                &format!(
                    "a highlighting job has run for over {} s and holds its thread (a grammar that loops?); \
                     {stuck} such now, the others go on",
                    STUCK_AFTER.as_secs()
                ),
            );
        }
        let queue = self.queues.get(&session).copied().unwrap_or_default();
        if jobs.queued.load(Ordering::Relaxed) >= limits::QUEUED_JOBS as u64
            || pool.queued_in(queue) >= limits::QUEUED_JOBS_PER_QUEUE
        {
            return;
        }
        let cancel = Cancel::new();
        self.computing.insert(ticket, cancel.clone());
        jobs.queued.fetch_add(1, Ordering::Relaxed);
        let jobs = Arc::clone(jobs);
        let metrics = Arc::clone(self.process.metrics());
        metrics.cpu_job(1);
        pool.run(queue, move || {
            jobs.queued.fetch_sub(1, Ordering::Relaxed);
            metrics.cpu_job(-1);
            if cancel.is_cancelled() {
                return;
            }
            let done = job.run();
            wake(Wake::Computed(ticket, done));
        });
    }

    /// Marks a confirmation's state used in the process's ledger. A ledger on the network
    /// ([`crate::Ledger::blocks`]) is asked on the read pool, in the session's queue, and its answer
    /// comes back as [`Wake::Spent`]; the process's own answers at once.
    fn spend(&mut self, session: SessionId, ticket: Ticket, id: String, until_ms: u64) {
        let ledger = Arc::clone(self.process.ledger());
        match self.wake.clone() {
            Some(wake) if ledger.blocks() => {
                let queue = self.queues.get(&session).copied().unwrap_or_default();
                self.process
                    .reads()
                    .run(queue, move || wake(Wake::Spent(ticket, ledger.spend(&id, until_ms, now_ms()))));
            }
            _ => {
                let spent = ledger.spend(&id, until_ms, now_ms());
                self.spends.push_back((ticket, spent));
            }
        }
    }

    fn drain(&mut self, deliver: &mut dyn FnMut(Delivery)) {
        if !self.held.is_empty() {
            self.release_held(deliver);
        }
        loop {
            while let Some(out) = self.server.poll_output() {
                match out {
                    Output::Compute { session, ticket, job } => self.compute(session, ticket, job),
                    Output::Send { session, tag, message, said } => {
                        self.pass(Delivery::Send { session, tag, message, said }, deliver)
                    }
                    Output::Done { session, tag } => self.pass(Delivery::Done { session, tag }, deliver),
                    Output::Audit { session, record } => self.audit_record(session, &record),
                    Output::Fetch { session, ticket, request } => self.start(session, ticket, request),
                    Output::Work { ticket, deadline_ms, .. } => {
                        if let std::collections::hash_map::Entry::Vacant(e) = self.work.entry(ticket) {
                            e.insert(deadline_ms);
                            // The deadline comes as a wake even when no step asks again (the work
                            // runs on other threads): the core's time, kept on the monotonic clock.
                            if let Some(wake) = self.wake.clone() {
                                let at = Instant::now() + Duration::from_millis(deadline_ms.saturating_sub(now_ms()));
                                self.process.timer().at(at, move || wake(Wake::Deadline(ticket)));
                            }
                        }
                        self.work_queue.push_back(ticket);
                    }
                    Output::PastDeadline { ticket, .. } => {
                        // The core took a step as the last: the timer is spent, and the stop counted.
                        if self.work.remove(&ticket).is_some() {
                            self.work_queue.retain(|t| *t != ticket);
                        }
                        self.process.metrics().highlight_past_deadline();
                    }
                    Output::Admit { session, ticket, bytes } => self.admit(session, ticket, bytes),
                    Output::Timer { ticket, at_ms, .. } => {
                        // Without threads (tests), a timer is kept and never fires: nothing waits on it.
                        self.timers.insert(ticket, at_ms);
                        if let Some(wake) = self.wake.clone() {
                            let at = Instant::now() + Duration::from_millis(at_ms.saturating_sub(now_ms()));
                            self.process.timer().at(at, move || wake(Wake::Timer(ticket)));
                        }
                    }
                    Output::Cancel(ticket) => self.cancel(ticket),
                    Output::Spend { session, ticket, id, until_ms } => self.spend(session, ticket, id, until_ms),
                    Output::Log { level, message } => self.logger.log(level, &message),
                }
            }
            if let Some((ticket, spent)) = self.spends.pop_front() {
                self.server.handle(Input::Spent { ticket, spent }, now_ms());
                continue;
            }
            if let Some((ticket, granted)) = self.admissions.pop_front() {
                self.server.handle(Input::Admitted { ticket, granted }, now_ms());
                continue;
            }
            // A job with no thread of its own runs here, one at a time, the outputs of each carried out.
            if let Some((ticket, job)) = self.jobs.pop_front() {
                let done = job.run();
                self.server.handle(Input::Computed { ticket, done }, now_ms());
                continue;
            }
            // A step of the work asked for, at the time it is fed: the core decides from it whether
            // the step is the last. Each step is bounded by the core, and a step may ask for the next.
            let Some(ticket) = self.work_queue.pop_front() else { break };
            if !self.work.contains_key(&ticket) {
                continue;
            }
            self.server.handle(Input::Work { ticket }, now_ms());
        }
    }

    /// Makes `request` for `ticket`, or, for a GET already in flight with the same credentials,
    /// waits for that one. A shared read runs in the queue, and as the person, of the call that led it.
    fn start(&mut self, session: SessionId, ticket: Ticket, request: FetchRequest) {
        let cancel = Cancel::new();
        let flag = cancel.clone();
        let person = self.persons.get(&session).cloned();
        let flight = match ReadKey::of(credential(person.as_ref()), &request) {
            None => None,
            Some(key) => {
                match self.reads.join(key, (self.reader, ticket), Arc::clone(&self.on_fetched), cancel.clone()) {
                    Joined::Lead(flight) => Some(flight),
                    Joined::Follow(_) => {
                        self.process.metrics().read_shared();
                        self.fetching.insert(ticket, Fetching { session, waits: Waits::Shared });
                        return;
                    }
                }
            }
        };
        let bitbucket = Arc::clone(&self.bitbucket);
        let queue = self.queues.get(&session).copied().unwrap_or_default();
        let on_fetched = Arc::clone(&self.on_fetched);
        let reads = self.reads.clone();
        let logger = self.logger.enabled(Level::Debug).then(|| self.logger.clone());
        let metrics = Arc::clone(self.process.metrics());
        let lane = Lane::of(&request);
        self.process.reads().run_in(lane, queue, move || {
            if flag.is_cancelled() {
                return;
            }
            let read = i64::from(request.method == Method::Get);
            let started = Instant::now();
            let endpoint = logger.as_ref().map(|_| crate::metrics::endpoint_class(&request.path));
            let method = request.method;
            metrics.read_in_flight(read);
            let outcome = bitbucket.fetch_for(request, Requester { queue, person: person.as_ref(), lane }, &flag);
            metrics.read_in_flight(-read);
            if let (Some(logger), Some(endpoint)) = (&logger, endpoint) {
                let status = match &outcome {
                    FetchOutcome::Response(r) => serde_json::json!(r.status),
                    FetchOutcome::Failed(e) => serde_json::json!(format!("{:?}", e.kind)),
                };
                let fields = [
                    ("ticket", serde_json::json!(ticket.0)),
                    ("method", serde_json::json!(format!("{method:?}").to_ascii_uppercase())),
                    ("endpoint", serde_json::json!(endpoint)),
                    ("status", status),
                    ("duration_ms", serde_json::json!(started.elapsed().as_millis() as u64)),
                ];
                logger.event(Level::Debug, "bitbucket answered", &fields);
            }
            match flight {
                // A read abandoned meanwhile has nobody left to hand it to.
                Some(flight) => reads.finish(flight, outcome),
                None if !flag.is_cancelled() => on_fetched(ticket, outcome),
                None => {}
            }
        });
        let waits = if flight.is_some() { Waits::Shared } else { Waits::Alone(cancel) };
        self.fetching.insert(ticket, Fetching { session, waits });
    }

    /// Asks the application's [`crate::Room`] for a large call's room, in the queue of the session's person (or
    /// the session). Without `wake` (tests) the room is granted at once and counted nowhere.
    fn admit(&mut self, session: SessionId, ticket: Ticket, bytes: u64) {
        let Some(wake) = self.wake.clone() else {
            self.admissions.push_back((ticket, true));
            return;
        };
        let queue = self.queues.get(&session).copied().unwrap_or_default();
        let grant = Arc::new(move |t: Ticket, granted: bool| wake(Wake::Admitted(t, granted)));
        match self.process.room().ask((self.id, ticket), queue, bytes, grant) {
            Asked::Granted => {
                self.rooms.insert(ticket);
                self.admissions.push_back((ticket, true));
            }
            Asked::Waits => {
                self.rooms.insert(ticket);
            }
            Asked::Refused => self.admissions.push_back((ticket, false)),
        }
    }

    fn cancel(&mut self, ticket: Ticket) {
        self.timers.remove(&ticket);
        if self.rooms.remove(&ticket) {
            self.process.room().give_back((self.id, ticket));
        }
        if let Some(job) = self.computing.remove(&ticket) {
            job.cancel();
        }
        if self.work.remove(&ticket).is_some() {
            self.work_queue.retain(|t| *t != ticket);
        }
        if let Some(f) = self.fetching.remove(&ticket) {
            self.stop(ticket, f.waits);
        }
    }

    /// `ticket` no longer waits for its request: an own request is cancelled, a shared one only
    /// once nobody else waits for it.
    fn stop(&self, ticket: Ticket, waits: Waits) {
        match waits {
            Waits::Alone(cancel) => cancel.cancel(),
            Waits::Shared => self.reads.leave(&(self.reader, ticket)),
        }
    }
}

impl Drop for Driver {
    /// The shell has stopped: no read it started goes on, unless another driver still waits for it.
    fn drop(&mut self) {
        for ticket in std::mem::take(&mut self.rooms) {
            self.process.room().give_back((self.id, ticket));
        }
        let fetching: Vec<(Ticket, Fetching)> = self.fetching.drain().collect();
        for (ticket, f) in fetching {
            self.stop(ticket, f.waits);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use bb_core::testing::highlight::Language;
    use bb_core::{Catalogue, ExposureOptions};
    use std::sync::{Mutex, mpsc};

    fn job(key: u64) -> Box<HighlightJob> {
        let rust = Language::detect("a.rs", None).unwrap();
        Box::new(HighlightJob::new(key, rust, false, vec![(b'C', "fn main() {}".into())]))
    }

    fn driver(process: &Process) -> Driver {
        let exposed = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
        let bitbucket = |_: FetchRequest, _: Option<&PersonalToken>, _: &Cancel| {
            FetchOutcome::failed(bb_core::FetchErrorKind::Unreachable, "none")
        };
        Driver::new(
            ServerConfig::new(exposed, "test"),
            process.clone(),
            Arc::new(bitbucket),
            Logger::new(None),
            |_, _| {},
        )
    }

    #[test]
    fn a_principal_names_the_login_or_a_digest_of_the_token_never_the_token() {
        struct NoGrant;
        impl crate::reach::Grant for NoGrant {
            fn refused(&self, _: &str) -> Result<String, String> {
                Err("ended".into())
            }
        }
        let login = PersonalToken::of_login("s3cret", "alice", Arc::new(NoGrant));
        assert_eq!(principal(&login), "user:alice");
        let own = principal(&PersonalToken::new("s3cret"));
        assert!(own.starts_with("token:") && own.len() == "token:".len() + 32, "{own}");
        assert!(!own.contains("s3cret"));
        assert_eq!(own, principal(&PersonalToken::new("s3cret")));
        assert_ne!(own, principal(&PersonalToken::new("s3cret2")));
        // SHA-256("abc") begins ba7816bf8f01cfea414140de5dae2223.
        assert_eq!(principal(&PersonalToken::new("abc")), "token:ba7816bf8f01cfea414140de5dae2223");
    }

    #[test]
    fn numbers_are_unique_where_they_are_used_and_nothing_is_counted_across_processes() {
        // Drivers of one process name their room apart, and its anonymous sessions' queues are apart.
        let process = Process::default();
        let (mut a, mut b) = (driver(&process), driver(&process));
        assert_ne!(a.id, b.id);
        let (sa, sb) = (a.open(None, &mut |_| {}), b.open(None, &mut |_| {}));
        assert_ne!(a.queues[&sa], b.queues[&sb]);
        // Drivers of two processes that share reads name their waiters apart there.
        let reads = SharedReads::new();
        let (c, d) = (driver(&Process::default()).share_reads(&reads), driver(&Process::default()).share_reads(&reads));
        assert_ne!(c.reader, d.reader);
        // A new process numbers from the start: no count is kept between processes.
        assert_eq!((c.id, d.id), (0, 0));
    }

    #[test]
    fn a_job_cancelled_before_a_thread_takes_it_never_runs_and_the_next_in_its_queue_does() {
        let exposed = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
        let bitbucket = |_: FetchRequest, _: Option<&PersonalToken>, _: &Cancel| {
            FetchOutcome::failed(bb_core::FetchErrorKind::Unreachable, "none")
        };
        let (tx, woken) = mpsc::channel();
        let tx = Mutex::new(tx);
        let mut driver = Driver::new(
            ServerConfig::new(exposed, "test"),
            Process::default(),
            Arc::new(bitbucket),
            Logger::new(None),
            |_, _| {},
        )
        .on_wake(move |w| drop(tx.lock().unwrap().send(w)));
        let session = driver.open(None, &mut |_| {});
        // Every CPU thread is busy until released.
        let (release, held) = mpsc::channel::<()>();
        let held = Arc::new(Mutex::new(held));
        let threads = std::thread::available_parallelism().map_or(2, std::num::NonZero::get).saturating_sub(1).max(1);
        for _ in 0..threads {
            let held = Arc::clone(&held);
            driver.process().compute().run(u64::MAX, move || {
                let _ = held.lock().unwrap().recv();
            });
        }
        let (first, second) = (Ticket(1 << 40), Ticket((1 << 40) + 1));
        driver.compute(session, first, job(1));
        driver.compute(session, second, job(2));
        // The first job's call has answered: the core cancels it.
        driver.cancel(first);
        for _ in 0..threads {
            release.send(()).unwrap();
        }
        // The queue is first in, first out: once the second is back, the first has been taken and dropped.
        let back = woken.recv_timeout(Duration::from_secs(60)).unwrap();
        match &back {
            Wake::Computed(ticket, done) => assert_eq!((*ticket, done.key), (second, 2)),
            other => panic!("only the job was asked for, got {other:?}"),
        }
        assert!(woken.try_recv().is_err(), "the cancelled job sent nothing");
        driver.wake(back, &mut |_| {});
        assert!(driver.computing.is_empty(), "neither job is held for a cancel any more");
    }

    /// A seal for tests: the payload in hex after a counter (unique), opened by this seal only.
    #[derive(Debug, Default)]
    struct TestSeal(std::sync::atomic::AtomicU64);

    impl bb_core::Seal for TestSeal {
        fn seal(&self, payload: &[u8]) -> String {
            let n = self.0.fetch_add(1, Ordering::Relaxed);
            let hex: String = payload.iter().map(|b| format!("{b:02x}")).collect();
            format!("t{n}.{hex}")
        }
        fn open(&self, token: &str) -> Option<(Vec<u8>, String)> {
            let (n, hex) = token.strip_prefix('t')?.split_once('.')?;
            let bytes: Option<Vec<u8>> =
                (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok()).collect();
            Some((bytes?, n.to_owned()))
        }
        fn digest(&self, bytes: &[u8]) -> String {
            format!("{}", bytes.len())
        }
    }

    /// A ledger on the network, as far as the driver knows: says on which thread it was asked.
    struct FarLedger(Mutex<Vec<(String, Option<String>)>>);

    impl crate::Ledger for FarLedger {
        fn spend(&self, id: &str, _: u64, _: u64) -> bb_core::Spent {
            let mut seen = self.0.lock().unwrap();
            let used = seen.iter().any(|(i, _)| i == id);
            seen.push((id.to_owned(), std::thread::current().name().map(str::to_owned)));
            if used { bb_core::Spent::Used } else { bb_core::Spent::Fresh }
        }
        fn blocks(&self) -> bool {
            true
        }
    }

    #[test]
    fn a_ledger_on_the_network_is_asked_on_a_read_thread_and_answers_through_wake() {
        let ledger = Arc::new(FarLedger(Mutex::new(Vec::new())));
        let process = Process::new(64 << 20).with_ledger(ledger.clone());
        let writes = ExposureOptions { allow_writes: true, ..ExposureOptions::default() };
        let exposed = bb_core::testing::test_catalogue().expose(&writes).unwrap();
        let mut config = ServerConfig::new(exposed, "test");
        config.seal = Some(Arc::new(TestSeal::default()));
        let (posts, posted) = mpsc::channel::<String>();
        let posts = Mutex::new(posts);
        let bitbucket = move |r: FetchRequest, _: Option<&PersonalToken>, _: &Cancel| {
            if r.method == Method::Post {
                let _ = posts.lock().unwrap().send(r.path.clone());
            }
            FetchOutcome::failed(bb_core::FetchErrorKind::Unreachable, "none")
        };
        let (fetched, fetches) = mpsc::channel::<(Ticket, FetchOutcome)>();
        let fetched = Mutex::new(fetched);
        let (tx, woken) = mpsc::channel::<Wake>();
        let tx = Mutex::new(tx);
        let mut driver = Driver::new(config, process, Arc::new(bitbucket), Logger::new(None), move |t, o| {
            let _ = fetched.lock().unwrap().send((t, o));
        })
        .on_wake(move |w| drop(tx.lock().unwrap().send(w)));
        let session = driver.open(None, &mut |_| {});
        let meta = serde_json::json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}});
        let mut answers: Vec<serde_json::Value> = Vec::new();
        let feed = |driver: &mut Driver, bytes: &[u8], tag: u64, answers: &mut Vec<serde_json::Value>| {
            driver.feed(Input::Message { session, bytes, tag }, &mut |d| {
                if let Delivery::Send { message, .. } = d {
                    answers.push(serde_json::from_slice(&message).unwrap());
                }
            });
        };
        let call = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "merge_thing", "arguments": {"id": 1}, "_meta": meta}});
        feed(&mut driver, call.to_string().as_bytes(), 1, &mut answers);
        // merge_thing reads the thing first (the pin): answer its read.
        let (ticket, _) = fetches.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|_| panic!("{answers:?}"));
        let thing = FetchOutcome::response(200, br#"{"version": 3}"#.to_vec());
        driver.feed(Input::Fetched { ticket, outcome: thing }, &mut |d| {
            if let Delivery::Send { message, .. } = d {
                answers.push(serde_json::from_slice(&message).unwrap());
            }
        });
        let first = answers.pop().unwrap();
        assert_eq!(first["result"]["resultType"], "input_required", "{first}");
        let state = first["result"]["requestState"].as_str().unwrap().to_owned();
        let retry = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "merge_thing", "arguments": {"id": 1}, "_meta": meta, "requestState": state,
                       "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}}});
        feed(&mut driver, retry.to_string().as_bytes(), 2, &mut answers);
        assert!(answers.is_empty(), "the call waits for the ledger: {answers:?}");
        let back = woken.recv_timeout(Duration::from_secs(60)).unwrap();
        assert!(matches!(back, Wake::Spent(_, bb_core::Spent::Fresh)), "{back:?}");
        let asked_on = ledger.0.lock().unwrap()[0].1.clone();
        assert_eq!(asked_on.as_deref(), Some("bb-read"), "asked on a read thread, not the driver's");
        driver.wake(back, &mut |_| {});
        // Confirmed: the merge is sent at the version the person saw.
        let path = posted.recv_timeout(Duration::from_secs(60)).unwrap();
        assert!(path.ends_with("/things/1/merge"), "{path}");
    }

    /// A sink whose queue is full until the test opens it; it keeps who waits for room.
    #[derive(Default)]
    struct Gate {
        open: std::sync::atomic::AtomicBool,
        lines: Mutex<Vec<Vec<u8>>>,
        waiting: Mutex<Vec<Box<dyn FnOnce() + Send>>>,
    }

    impl crate::Audit for Gate {
        fn offer(&self, line: Vec<u8>) -> Result<(), Vec<u8>> {
            if !self.open.load(Ordering::SeqCst) {
                return Err(line);
            }
            self.lines.lock().unwrap().push(line);
            Ok(())
        }
        fn when_room(&self, room: Box<dyn FnOnce() + Send>) {
            self.waiting.lock().unwrap().push(room);
        }
        fn refusing(&self) -> bool {
            false
        }
    }

    #[test]
    fn a_full_audit_queue_holds_the_answer_until_its_record_is_queued() {
        let gate = Arc::new(Gate::default());
        let trail = crate::AuditTrail::new(gate.clone(), "stdio");
        let process = Process::new(64 << 20).with_audit(trail);
        let exposed = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
        let bitbucket = |_: FetchRequest, _: Option<&PersonalToken>, _: &Cancel| {
            FetchOutcome::failed(bb_core::FetchErrorKind::Unreachable, "none")
        };
        let (tx, woken) = mpsc::channel::<Wake>();
        let tx = Mutex::new(tx);
        let mut driver =
            Driver::new(ServerConfig::new(exposed, "test"), process, Arc::new(bitbucket), Logger::new(None), |_, _| {})
                .on_wake(move |w| drop(tx.lock().unwrap().send(w)));
        let session = driver.open(None, &mut |_| {});
        // Answered at once (its arguments are refused), so its record and answer come together.
        let call = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "get_pull_request", "arguments": {},
                       "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
        let mut delivered = Vec::new();
        driver.feed(Input::Message { session, bytes: call.to_string().as_bytes(), tag: 1 }, &mut |d| delivered.push(d));
        assert!(delivered.is_empty(), "the answer waits for its record: {delivered:?}");
        assert_eq!(gate.waiting.lock().unwrap().len(), 1, "the driver asked to be woken when there is room");
        gate.open.store(true, Ordering::SeqCst);
        for room in gate.waiting.lock().unwrap().drain(..) {
            room();
        }
        let wake = woken.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(matches!(wake, Wake::AuditRoom), "{wake:?}");
        driver.wake(wake, &mut |d| delivered.push(d));
        assert_eq!(gate.lines.lock().unwrap().len(), 1, "the record went first");
        assert!(matches!(delivered.first(), Some(Delivery::Send { .. })), "{delivered:?}");
        assert!(matches!(delivered.last(), Some(Delivery::Done { .. })), "{delivered:?}");
    }
}
