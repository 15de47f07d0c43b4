//! Requests naming site-defined resources (`ResourceRequest::from_list_with`): accepted once
//! defined, checked by type, turned into chunk requirements or amounts.

use super::site::{ResourceDef, ResourceFlags, ResourceType, SiteResources};
use super::{parse_list, ResourceError, ResourceRequest};

fn site() -> SiteResources {
    let mut site = SiteResources::default();
    let defs = [
        ("gpu_type", ResourceType::String, "h"),
        ("feature", ResourceType::StringArray, "h"),
        ("bigmem", ResourceType::Boolean, "h"),
        ("scratch", ResourceType::Size, "hn"),
        ("qos", ResourceType::String, ""),
        ("licenses", ResourceType::Long, "q"),
    ];
    for (name, kind, flags) in defs {
        let flags = ResourceFlags::parse(flags, name, kind).unwrap();
        site.define(ResourceDef { name: name.into(), kind, flags }).unwrap();
    }
    site
}

fn request(list: &str) -> Result<ResourceRequest, ResourceError> {
    ResourceRequest::from_list_with(&parse_list(list).unwrap(), &site())
}

#[test]
fn undefined_names_stay_unknown_with_openpbs_texts() {
    let job_wide = ResourceRequest::from_list(&parse_list("gpu_type=a100").unwrap()).unwrap_err();
    assert!(job_wide.is_unknown_resource());
    assert_eq!(job_wide.message, "Unknown resource Resource_List.gpu_type");
    let chunk = ResourceRequest::from_list(&parse_list("select=1:ngpus=1:gpu_type=a100").unwrap()).unwrap_err();
    assert!(chunk.is_unknown_resource());
    assert_eq!(chunk.message, "Unknown resource: gpu_type");
    assert_eq!(request("select=1:model=x").unwrap_err().message, "Unknown resource: model");
}

#[test]
fn chunk_resources_become_requirements_and_amounts() {
    let got = request("select=2:ngpus=1:gpu_type=a100:feature=ib:bigmem=false:scratch=10GB+1:bigmem=t").unwrap();
    let first = &got.chunks[0];
    assert_eq!(first.properties, ["gpu_type=a100", "feature=ib", "!bigmem"]);
    assert_eq!(first.amounts, [("scratch".to_string(), 10 << 30)]);
    assert_eq!(got.chunks[1].properties, ["bigmem"]);
    let select = got.display_value("select").unwrap();
    assert_eq!(select, "2:ngpus=1:gpu_type=a100:feature=ib:bigmem=false:scratch=10GB+1:bigmem=t", "as written");
    let scheduled = super::display::schedselect(got.display_value("select").unwrap());
    assert!(scheduled.contains(":gpu_type=a100:feature=ib:bigmem=False:"), "{scheduled}");
}

#[test]
fn job_wide_site_resources_are_shown_and_reach_every_chunk() {
    let got = request("gpu_type=a100,qos=high,licenses=2,ncpus=2").unwrap();
    assert_eq!(got.display_value("gpu_type"), Some("a100"));
    assert_eq!(got.display_value("qos"), Some("high"));
    assert_eq!(got.display_value("licenses"), Some("2"));
    assert_eq!(got.chunks[0].properties, ["gpu_type=a100"]);
    let nodes = request("nodes=2:ppn=1,scratch=1gb").unwrap();
    assert_eq!(nodes.chunks[0].amounts, [("scratch".to_string(), 1 << 30)]);
    // Server-level resources may go with select; host-level ones must be inside it.
    assert!(request("select=1:ncpus=1,qos=high").is_ok());
    let error = request("select=1:ncpus=1,gpu_type=a100").unwrap_err();
    assert_eq!(error.message, "\"-lresource=\" cannot be used with \"select\" or \"place\", resource is: gpu_type");
}

#[test]
fn bad_site_values_and_placements_are_refused() {
    let cases = [
        ("select=1:bigmem=maybe", "is not a boolean"),
        ("select=1:scratch=lots", "bad size"),
        ("select=1:qos=high", "is not host-level"),
        ("select=1:gpu_type=a:gpu_type=b", "given twice"),
        ("licenses=many", "is not an integer"),
        ("scratch=-1", "scratch"),
    ];
    for (list, part) in cases {
        let error = request(list).expect_err(list);
        assert!(!error.is_unknown_resource(), "{list}");
        assert!(error.message.contains(part), "{list}: {error}");
    }
    let long = format!("gpu_type={}", "x".repeat(super::site::MAX_SITE_VALUE + 1));
    assert!(request(&long).unwrap_err().message.contains("longer than"));
}

#[test]
fn a_boolean_named_without_value_is_unset_as_openpbs_does() {
    // `-l wd` on NCI Gadi: qsub sends an empty value, the server unsets the boolean.
    let got = request("ncpus=2,bigmem").unwrap();
    assert_eq!(got.display_value("bigmem"), None);
    assert!(got.chunks[0].properties.is_empty());
    assert!(parse_list("ncpus=2,bigmem=").is_err(), "an empty value written with = stays refused");
    assert!(request("walltime").is_err(), "a value-less duration is a bad value");
}
