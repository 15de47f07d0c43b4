//! Site-defined resources on the server: the definitions (`ServerState::resources`), nodes'
//! values for them (`Node::site`), and the rules qmgr applies (OpenPBS `req_manager.c`
//! `mgr_resource_create`/`mgr_resource_delete`): create with a checked name, type and flags;
//! delete or retype only while no job names the resource, unsetting it from nodes.
//!
//! Owns: what may change and the texts of refusals. Must not: persist (callers record the
//! store operations these return).

use super::{Node, ServerState};
use crate::state::records::{StoreOp, StoredResourceDef};
use ::job::resources::site::{DefineError, ResourceDef, SiteResources, WordsError};
use ::job::Attr;
use proto::error::{ErrorCode, RequestError};
use proto::manage::{AttrOp, ManageOp, SetOp};
use proto::status::ObjectStatus;

/// The stored form of a definition.
pub fn stored(def: &ResourceDef) -> StoredResourceDef {
    StoredResourceDef { name: def.name.clone(), kind: def.kind.word().to_string(), flags: def.flags.word() }
}

/// OpenPBS `Illegal attribute or resource value` with our detail.
fn bad(detail: impl std::fmt::Display) -> RequestError {
    RequestError::with_detail(ErrorCode::BadAttributeValue, detail)
}

/// Refused definition words: OpenPBS's own texts for inconsistent flags (`Erroneous to have
/// flag ...`) alone, as its `reply_text` sends them; the others as [`bad`].
fn bad_words(error: WordsError) -> RequestError {
    match error {
        WordsError::InconsistentFlags(text) => RequestError::new(ErrorCode::BadAttributeValue, text),
        WordsError::Invalid(detail) => bad(detail),
    }
}

/// The `type` and `flag` words of a create or set command; anything else is refused.
fn words(attrs: &[AttrOp]) -> Result<(Option<&str>, Option<&str>), RequestError> {
    let (mut kind, mut flags) = (None, None);
    for attr in attrs {
        let slot = match attr.name.as_str() {
            "type" if attr.resource.is_none() && attr.op == SetOp::Set => &mut kind,
            "flag" if attr.resource.is_none() && attr.op == SetOp::Set => &mut flags,
            _ => return Err(bad(format!("{} (a resource has only type = T and flag = F)", attr.full_name()))),
        };
        *slot = Some(attr.value.trim());
    }
    Ok((kind, flags))
}

impl ServerState {
    /// qmgr `create`/`delete`/`set` `resource NAME`; the store operations to record.
    pub fn manage_resource(
        &mut self,
        op: ManageOp,
        name: &str,
        attrs: &[AttrOp],
    ) -> Result<Vec<StoreOp>, RequestError> {
        match op {
            ManageOp::Create => {
                let (kind, flags) = words(attrs)?;
                let def = ResourceDef::from_words(name, kind, flags).map_err(bad_words)?;
                let stored = stored(&def);
                self.resources.define(def).map_err(|error| match error {
                    // OpenPBS `req_reject(PBSE_DUPLIST)`: the bare text, trailing blank included.
                    DefineError::Exists(_) => {
                        RequestError::new(ErrorCode::DuplicateEntry, format!("{} ", ErrorCode::DuplicateEntry.text()))
                    }
                    other => bad(other),
                })?;
                Ok(vec![StoreOp::PutResourceDef(stored)])
            }
            ManageOp::Delete => {
                let def = self.resources.get(name).ok_or_else(|| unknown(name))?;
                self.check_unused(&def.name)?;
                self.resources.remove(name);
                // The server's value goes too (the qmgr handler stores the server attributes).
                self.attrs.resources_available.remove(name);
                self.attrs.resources_default.remove(name);
                let mut ops = Vec::new();
                for node in self.nodes.values_mut() {
                    if node.site.remove(name).is_some() {
                        ops.push(node_values_op(node));
                    }
                }
                // Queues keep no defaults or limits of it (stored with the configuration).
                for queue in self.queues.values_mut() {
                    queue.resources_default.remove(name);
                    queue.resources_max.remove(name);
                    queue.resources_min.remove(name);
                }
                ops.push(StoreOp::DeleteResourceDef(name.to_string()));
                Ok(ops)
            }
            ManageOp::Set => {
                let old = self.resources.get(name).ok_or_else(|| unknown(name))?.clone();
                let (kind, flags) = words(attrs)?;
                let kind = kind.unwrap_or(old.kind.word());
                let flags = flags.map(str::to_string).unwrap_or(old.flags.word());
                let def = ResourceDef::from_words(name, Some(kind), Some(&flags)).map_err(bad_words)?;
                self.check_unused(name)?;
                if def.kind != old.kind && self.nodes.values().any(|node| node.site.contains_key(name)) {
                    return Err(RequestError::new(ErrorCode::ResourceBusy, "Resource busy on node"));
                }
                let stored = stored(&def);
                self.resources.replace(def);
                Ok(vec![StoreOp::PutResourceDef(stored)])
            }
            ManageOp::Unset => {
                Err(RequestError::with_detail(ErrorCode::InvalidRequest, "(a resource cannot be unset)"))
            }
        }
    }

    /// OpenPBS `check_resource_set_on_jobs_or_resvs`: refused while any job, finished ones
    /// included (their requests are parsed again at start), names the resource.
    fn check_unused(&self, name: &str) -> Result<(), RequestError> {
        let used = self.jobs.values().any(|job| {
            job.spec.resources.iter().any(|(resource, value)| {
                resource == name || (resource == "select" && names_in_select(value).any(|item| item == name))
            })
        });
        if used {
            return Err(RequestError::new(ErrorCode::ResourceBusy, "Resource busy on job"));
        }
        Ok(())
    }

    /// Flags `i` (invisible) and `r` (read-only): only operators and managers may ask for
    /// such a resource (OpenPBS `decode_resc`: PBSE_ATTRRO job-wide, `attr_fn_resc.c:153`;
    /// `validate_perm_res_in_select`: PBSE_INVALSELECTRESC in a chunk, `req_quejob.c:191`).
    pub fn check_site_permissions(
        &self,
        resources: &[(String, String)],
        requester: &super::Requester,
    ) -> Result<(), RequestError> {
        let protected =
            |name: &str| self.resources.get(name).is_some_and(|def| def.flags.invisible || def.flags.read_only);
        if self.resources.iter().all(|def| !def.flags.invisible && !def.flags.read_only) || self.is_operator(requester)
        {
            return Ok(());
        }
        for (name, value) in resources {
            if protected(name) {
                let text = format!("{} Resource_List.{name}", ErrorCode::ReadOnlyAttribute.text());
                return Err(RequestError::new(ErrorCode::ReadOnlyAttribute, text));
            }
            if name == "select" {
                if let Some(item) = names_in_select(value).find(|item| protected(item)) {
                    let text = format!("{}: {item}", ErrorCode::InvalidSelectResource.text());
                    return Err(RequestError::new(ErrorCode::InvalidSelectResource, text));
                }
            }
        }
        Ok(())
    }

    /// `resources_available.NAME = value` on a node: the name must be defined, the value of
    /// its type; `unset` removes it. The store operation to record.
    pub fn set_node_resource(
        node: &mut Node,
        site: &SiteResources,
        attr: &AttrOp,
        unset: bool,
    ) -> Result<StoreOp, RequestError> {
        let name = attr.resource.as_deref().unwrap_or_default();
        let def = site.get(name).ok_or_else(|| {
            RequestError::new(
                ErrorCode::UnknownResource,
                format!("{} {}", ErrorCode::UnknownResource.text(), attr.full_name()),
            )
        })?;
        if unset {
            node.site.remove(name);
        } else {
            let shown =
                def.normalize(attr.value.trim()).map_err(|detail| bad(format!("{} ({detail})", attr.full_name())))?;
            node.site.insert(name.to_string(), shown);
        }
        Ok(node_values_op(node))
    }

    /// qmgr list/print resource: every definition (empty `names`) or the named ones. Without
    /// `privileged` (operators and managers), those with flag `i` are as if not defined.
    pub fn resource_statuses(&self, names: &[String], privileged: bool) -> (Vec<ObjectStatus>, Vec<RequestError>) {
        let visible = |def: &&ResourceDef| privileged || !def.flags.invisible;
        let status = |def: &ResourceDef| ObjectStatus {
            name: def.name.clone(),
            attrs: vec![Attr::new("type", def.kind.word()), Attr::new("flag", def.flags.word())],
        };
        if names.is_empty() {
            return (self.resources.iter().filter(visible).map(status).collect(), Vec::new());
        }
        let mut objects = Vec::new();
        let mut errors = Vec::new();
        for name in names {
            match self.resources.get(name).filter(visible) {
                Some(def) => objects.push(status(def)),
                None => errors.push(unknown(name)),
            }
        }
        (objects, errors)
    }
}

/// `Unknown resource NAME`.
fn unknown(name: &str) -> RequestError {
    RequestError::with_detail(ErrorCode::UnknownResource, name)
}

/// The store operation replacing a node's values.
pub fn node_values_op(node: &Node) -> StoreOp {
    StoreOp::SetNodeResources {
        node: node.name.clone(),
        values: node.site.iter().map(|(name, value)| (name.clone(), value.clone())).collect(),
    }
}

/// The resource names of a select value (`2:ncpus=1:gpu_type=a100+...` -> `ncpus`, `gpu_type`).
fn names_in_select(value: &str) -> impl Iterator<Item = &str> {
    value.split(['+', ':']).filter_map(|item| item.split_once('=').map(|(name, _)| name))
}

/// What the scheduler matches a node's chunks against: its properties, then the words of its
/// host-level site values (`gpu_type=a100`, a true boolean's name, each array item).
pub fn node_words(node: &Node, site: &SiteResources) -> Vec<String> {
    let mut words = node.properties.clone();
    for (name, value) in &node.site {
        if let Some(def) = site.get(name).filter(|def| def.is_host_match()) {
            words.extend(def.node_words(value));
        }
    }
    words
}

/// The node's host-level consumable site resources (flag `n`/`f`) for the scheduler: what it
/// has (`resources_available`, in counted units) and what running jobs hold here. A value that
/// is no amount (negative) counts as none.
pub fn node_amounts(node: &Node, site: &SiteResources) -> Vec<sched::SiteAmount> {
    let consumable = node.site.iter().filter_map(|(name, value)| Some((site.get(name)?, value)));
    consumable
        .filter(|(def, _)| def.flags.host && !def.is_host_match())
        .map(|(def, value)| sched::SiteAmount {
            name: def.name.clone(),
            available: def.amount(value).unwrap_or(0),
            assigned: node.site_assigned.get(&def.name).copied().unwrap_or(0),
        })
        .collect()
}

/// Whether `attr` (`Resource_List.x`, `resources_available.x`, ...) names a site resource with
/// flag `i`: OpenPBS shows those to operators and managers only.
pub fn is_invisible(site: &SiteResources, attr: &Attr) -> bool {
    attr.resource.as_deref().is_some_and(|name| is_invisible_resource(site, name))
}

/// Whether `resource` is a site resource flagged invisible (`i`).
pub fn is_invisible_resource(site: &SiteResources, resource: &str) -> bool {
    site.get(resource).is_some_and(|def| def.flags.invisible)
}
