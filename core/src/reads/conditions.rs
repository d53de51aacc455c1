//! What the required-builds check needs, read once for any plan that shows requirements (the card,
//! `get_build_status`, `list_required_builds` for a pull request): every page of the repository's
//! conditions, then the branching model only when a condition has a `MODEL_*` matcher; or, for a
//! view that would rather spend a request than a round trip ([`ConditionsReader::eager`]), the
//! branching model beside the first page, used only when a condition needs it.
//!
//! Requests: conditions `GET /rest/required-builds/latest/projects/{key}/repos/{slug}/conditions`
//! (7.14+, paged; up to [`MAX_PAGES`] pages), and `GET /rest/branch-utils/latest/projects/{key}/repos/{slug}/branchmodel`
//! [reference "Required builds": spec, rec]. Anything that keeps bb from deciding as the check
//! would — the endpoint missing or forbidden, a condition bb cannot read, more conditions than bb
//! reads — ends in "cannot tell", and views say nothing about requirements.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::args::paging;
use crate::bitbucket::{RawPage, segment};
use crate::fetch::{FetchOutcome, FetchRequest};
use crate::requirements::{
    self, BranchModel, BuildFacts, Condition, KeyStatus, RefMatcher, Verdict, branch_model_from_json,
    condition_from_json,
};

/// Names the reads of a [`ConditionsReader`]; a plan files them under a read name of its own that wraps these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConditionsRead {
    /// A page of conditions.
    Page,
    /// The branching model, asked for only when a condition has a `MODEL_*` matcher.
    Model,
}

/// Conditions asked for per page.
const PAGE_LIMIT: u64 = 100;
/// Pages of conditions read at most (1,000 conditions); past them bb cannot tell.
pub const MAX_PAGES: usize = 10;

/// The branching model, as far as the reader knows it.
#[derive(Debug)]
enum Model {
    /// Not asked for (no condition matches by it).
    NotAsked,
    /// Asked for beside the first page, not answered yet.
    Pending,
    /// Asked for, and Bitbucket's answer could not be read.
    Unreadable,
    /// Read.
    Read(BranchModel),
}

impl Model {
    fn read(&self) -> Option<&BranchModel> {
        match self {
            Model::Read(m) => Some(m),
            Model::NotAsked | Model::Pending | Model::Unreadable => None,
        }
    }
}

/// What has been read so far.
#[derive(Debug)]
pub struct ConditionsReader {
    project: String,
    repo: String,
    conditions: Vec<Condition>,
    raw: Vec<Value>,
    pages: usize,
    model: Model,
    cannot_tell: Option<String>,
    /// Every page of conditions is read (or bb knows it cannot tell), and whether a condition names
    /// the branching model.
    pages_done: Option<bool>,
    done: bool,
}

impl ConditionsReader {
    /// A reader for `project`/`repo` and its first request, a [`ConditionsRead::Page`].
    pub fn new(project: &str, repo: &str) -> (ConditionsReader, FetchRequest) {
        let reader = ConditionsReader {
            project: project.to_owned(),
            repo: repo.to_owned(),
            conditions: Vec::new(),
            raw: Vec::new(),
            pages: 0,
            model: Model::NotAsked,
            cannot_tell: None,
            pages_done: None,
            done: false,
        };
        let first = reader.page_request(0);
        (reader, first)
    }

    /// A reader that asks for the branching model beside the first page (a view's: one request more
    /// for a repository that needs no model, one round trip less for one that does), and both requests.
    pub fn eager(project: &str, repo: &str) -> (ConditionsReader, Vec<(ConditionsRead, FetchRequest)>) {
        let (mut reader, first) = ConditionsReader::new(project, repo);
        reader.model = Model::Pending;
        let model = model_request(project, repo);
        (reader, vec![(ConditionsRead::Page, first), (ConditionsRead::Model, model)])
    }

    /// Done once the pages are and, when a condition needs it, the branching model has come.
    fn settle(&mut self) {
        self.done = match self.pages_done {
            None => false,
            Some(needs_model) => self.cannot_tell.is_some() || !needs_model || !matches!(self.model, Model::Pending),
        };
    }

    fn page_request(&self, start: u64) -> FetchRequest {
        page_request(&self.project, &self.repo, start, PAGE_LIMIT)
    }

    /// Takes the outcome of `read`; may ask for more through `more`.
    pub fn on(
        &mut self,
        read: ConditionsRead,
        outcome: &FetchOutcome,
        more: &mut dyn FnMut(ConditionsRead, FetchRequest),
    ) {
        match read {
            ConditionsRead::Page => self.on_page(outcome, more),
            ConditionsRead::Model => {
                self.model = match outcome {
                    FetchOutcome::Response(r) if r.status == 200 => serde_json::from_slice::<Value>(&r.body)
                        .ok()
                        .map(|v| branch_model_from_json(&v))
                        .map_or(Model::Unreadable, Model::Read),
                    _ => Model::Unreadable,
                };
                self.settle();
            }
        }
    }

    fn on_page(&mut self, outcome: &FetchOutcome, more: &mut dyn FnMut(ConditionsRead, FetchRequest)) {
        let page = match outcome {
            FetchOutcome::Response(r) if r.status == 200 => serde_json::from_slice::<RawPage>(&r.body).ok(),
            FetchOutcome::Response(r) => {
                return self.stop(format!("Bitbucket answered {} for the required-build conditions", r.status));
            }
            FetchOutcome::Failed(e) => {
                return self.stop(format!("the required-build conditions could not be read ({})", e.detail));
            }
        };
        let Some(page) = page else { return self.stop("the required-build conditions could not be read".into()) };
        self.pages += 1;
        for value in &page.values {
            match condition_from_json(value) {
                Some(c) => self.conditions.push(c),
                None => return self.stop("a required-build condition bb cannot read".into()),
            }
        }
        self.raw.extend(page.values.iter().cloned());
        let next = page.decode::<Value>().next;
        match next {
            Some(start) if self.pages < MAX_PAGES => more(ConditionsRead::Page, self.page_request(start)),
            Some(_) => self.stop(format!("more than {} required-build conditions", MAX_PAGES as u64 * PAGE_LIMIT)),
            None => {
                let needs_model = self.conditions.iter().any(|c| {
                    std::iter::once(&c.ref_matcher)
                        .chain(c.exempt.as_ref())
                        .any(|m| matches!(m, RefMatcher::ModelBranch(_) | RefMatcher::ModelCategory(_)))
                });
                if needs_model && matches!(self.model, Model::NotAsked) {
                    self.model = Model::Pending;
                    more(ConditionsRead::Model, model_request(&self.project, &self.repo));
                }
                self.pages_done = Some(needs_model);
                self.settle();
            }
        }
    }

    fn stop(&mut self, why: String) {
        self.cannot_tell = Some(why);
        self.pages_done = Some(false);
        self.done = true;
    }

    /// Every condition read, as Bitbucket sent it.
    pub fn raw(&self) -> &[Value] {
        &self.raw
    }

    /// Why bb cannot tell, once it knows it cannot.
    pub fn cannot_tell(&self) -> Option<&str> {
        self.cannot_tell.as_deref()
    }

    /// Whether everything needed has been read (or bb knows it cannot tell; the decode fuzz target's).
    #[cfg(fuzzing)]
    pub fn done(&self) -> bool {
        self.done
    }

    /// The required keys for a pull request from `source` into `target` (full ref ids).
    pub fn verdict(&self, target: &str, source: &str) -> Verdict {
        if let Some(why) = &self.cannot_tell {
            return Verdict::CannotTell(why.clone());
        }
        if !self.done {
            return Verdict::CannotTell("the required-build conditions were not read".into());
        }
        requirements::required_keys(&self.conditions, self.model.read(), target, source)
    }
}

/// A page of the repository's required-build conditions (as `list_required_builds` lists them, and the reader
/// reads them all).
pub fn page_request(project: &str, repo: &str, start: u64, limit: u64) -> FetchRequest {
    FetchRequest::get(
        format!("/rest/required-builds/latest/projects/{}/repos/{}/conditions", segment(project), segment(repo)),
        paging(start, limit).to_vec(),
    )
}

/// The repository's branching model, which `MODEL_*` matchers name branches by.
fn model_request(project: &str, repo: &str) -> FetchRequest {
    FetchRequest::get(
        format!("/rest/branch-utils/latest/projects/{}/repos/{}/branchmodel", segment(project), segment(repo)),
        vec![],
    )
}

/// The required keys' states for a pull request, or why bb cannot tell.
pub fn evaluate(
    reader: &ConditionsReader,
    target: &str,
    source: &str,
    builds: &[BuildFacts],
) -> Result<(BTreeSet<String>, Vec<KeyStatus>), String> {
    match reader.verdict(target, source) {
        Verdict::Required(keys) => {
            let statuses = requirements::key_statuses(&keys, builds, source);
            Ok((keys, statuses))
        }
        Verdict::CannotTell(why) => Err(why),
    }
}
