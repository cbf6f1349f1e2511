from dslake_index.families import Member, group_folder, name_pattern


def test_name_pattern_turns_dates_and_numbers_into_wildcards():
    assert name_pattern("readings_2024-01-31.csv") == "readings_*.csv"
    assert name_pattern("goes-wu334-20160824_to_20161023.csv") == "goes-wu*-*_to_*.csv"
    assert name_pattern("summary.csv") == "summary.csv"


def test_group_folder_forms_families_by_pattern_and_schema():
    members = [Member(f"d/r_2024-01-0{i}.csv", f"r_2024-01-0{i}.csv", "csv\x1f:a|b") for i in range(1, 6)]
    members.append(Member("d/r_2024-02-01.csv", "r_2024-02-01.csv", "csv\x1f:other"))
    members += [Member("d/one_1.csv", "one_1.csv", "csv\x1f:x"), Member("d/one_2.csv", "one_2.csv", "csv\x1f:x")]
    groups = group_folder("d", members, min_members=3)
    families = [g for g in groups if g.is_family]
    assert len(families) == 1
    family = families[0]
    assert family.glob == "d/r_*.csv"
    assert len(family.members) == 5
    assert family.value_ranges() == [("2024-01-01", "2024-01-05")]
    singles = sorted(g.members[0].path for g in groups if not g.is_family)
    assert singles == ["d/one_1.csv", "d/one_2.csv", "d/r_2024-02-01.csv"]


def test_tables_that_differ_by_one_word_form_a_family_but_notes_do_not():
    towns = ["boston", "chatham", "amherst", "ashburnham"]
    members = [Member(f"env/monthly_precipitations_{t}.csv", f"monthly_precipitations_{t}.csv",
                      "csv\x1f:Year|Jan|Feb") for t in towns]
    members += [Member(f"env/{n}_beach_datasheet.csv", f"{n}_beach_datasheet.csv", "csv\x1f:date|site|cfu")
                for n in ("carson", "constitution", "tenean")]
    members += [Member(f"env/note_{w}.md", f"note_{w}.md", "markdown") for w in ("alpha", "beta", "gamma")]
    members.append(Member("env/water.csv", "water.csv", "csv\x1f:date|site|cfu2"))
    groups = {g.pattern: g for g in group_folder("env", members, min_members=3)}
    rain = groups["monthly_precipitations_*.csv"]
    assert rain.is_family and rain.by_word and sorted(rain.variants()) == sorted(towns)
    assert groups["*_beach_datasheet.csv"].is_family
    assert all(not groups[f"note_{w}.md"].is_family for w in ("alpha", "beta", "gamma"))
    assert not groups["water.csv"].is_family


def test_numbered_documents_stay_single_but_numbered_records_form_a_family():
    memos = [Member(f"notes/memo_{i:05d}.md", f"memo_{i:05d}.md", "markdown") for i in range(1, 7)]
    logs = [Member(f"notes/log_2024-01-0{i}.txt", f"log_2024-01-0{i}.txt", "text") for i in range(1, 5)]
    batches = [Member(f"notes/batch_{i:03d}.json", f"batch_{i:03d}.json", "json\x1frecords:id|inspector|score")
               for i in range(1, 5)]
    groups = group_folder("notes", memos + logs + batches, min_members=3)
    families = [g for g in groups if g.is_family]
    assert [f.glob for f in families] == ["notes/batch_*.json"]
    singles = sorted(g.members[0].path for g in groups if not g.is_family)
    assert singles == sorted(m.path for m in memos + logs)


def test_sibling_folders_that_differ_by_dates_merge_per_name_pattern_and_schema():
    from dslake_index.families import group_files

    days = [f"obs/run_2024010{d}" for d in range(1, 6)]
    members = [Member(f"{f}/run_2024010{i}.sp3", f"run_2024010{i}.sp3", "sp3\x1flayout:sp3", 90_000)
               for i, f in enumerate(days, start=1)]
    members += [Member(f"{f}/run_2024010{i}.HDR", f"run_2024010{i}.HDR", "xml\x1f<H>:a|b", 900)
                for i, f in enumerate(days, start=1)]
    members += [Member(f"{f}/notes.md", "notes.md", "markdown") for f in days]  # prose: never a family
    members += [Member(f"{f}/t.csv", "t.csv", f"csv\x1f:c{i}|v") for i, f in enumerate(days)]  # schema per day
    groups = group_files(members, min_members=3)
    families = {g.glob: g for g in groups if g.is_family}
    assert set(families) == {"obs/run_*/run_*.sp3", "obs/run_*/run_*.HDR"}
    assert all(g.spans_folders and len(g.members) == 5 for g in families.values())
    assert families["obs/run_*/run_*.HDR"].documents is families["obs/run_*/run_*.sp3"]
    assert families["obs/run_*/run_*.sp3"].sidecars == [families["obs/run_*/run_*.HDR"]]
    assert sum(not g.is_family for g in groups) == 10


def test_values_shared_by_every_member_stay_in_the_glob():
    from dslake_index.families import group_files

    members = [Member(f"v2/SP3_{d}T235942_0201.csv", f"SP3_{d}T235942_0201.csv", "csv\x1f:a|b")
               for d in ("20190901", "20190902", "20190904")]
    family = next(g for g in group_files(members, min_members=3) if g.is_family)
    assert family.glob == "v2/SP3_*T235942_0201.csv" and family.value_ranges() == [("20190901", "20190904")]


def test_a_large_companion_is_not_a_sidecar_and_a_lone_header_documents_its_file():
    from dslake_index.families import group_files

    small = [Member("d/x.csv", "x.csv", "csv\x1f:a|b", 10_000), Member("d/x.json", "x.json", "json\x1fk", 300)]
    big = [Member("e/y.csv", "y.csv", "csv\x1f:a|b", 10_000), Member("e/y.json", "y.json", "json\x1fk", 9_000)]
    by_path = {g.members[0].path: g for g in group_files(small + big, min_members=3)}
    assert by_path["d/x.json"].documents is by_path["d/x.csv"]
    assert by_path["e/y.json"].documents is None and not by_path["e/y.csv"].sidecars


def test_describe_values_says_runs_gaps_and_what_is_left_out():
    from dslake_index.families import describe_values

    assert describe_values([f"{i:03d}" for i in range(1, 716)]) == "001 … 715, every number (715 values)"
    assert describe_values([str(y) for y in range(2002, 2024)]) == "2002 … 2023, every year (22 values)"
    assert describe_values(["20240101", "20240102", "20240104"]) == \
        "20240101 … 20240104, every day except 20240103 (3 values)"
    assert describe_values(["2024-01-01", "2024-02-01", "2024-03-01"]) == \
        "2024-01-01 … 2024-03-01, every month (3 values)"
    runs = describe_values([f"2018100{d}" for d in range(1, 10)] + [f"201909{d:02d}" for d in range(2, 30)])
    assert runs == "20181001 … 20181009, 20190902 … 20190929 (37 values; every day within each run)"
    many = describe_values([str(i) for i in range(1, 300) if i % 7], max_listed=8)
    assert many.startswith("1 … 6, 8 … 13, … and ") and "more in" in many and "up to 299" in many
    words = describe_values([f"town{chr(97 + i)}" for i in range(26)], max_listed=5)
    assert words == "towna, townb, townc, townd, towne, … and 21 more (the last is townz)"


def test_layout_signature_gives_fixed_layouts_a_schema_but_not_prose():
    from dslake_index.families import layout_signature

    assert layout_signature("sp3", None) == "sp3\x1flayout:sp3"
    assert layout_signature("xml", {"root": "H", "fields": {"b/c": "1", "a": "x"}}) == "xml\x1f<H>:a|b/c"
    assert layout_signature("cdf", {"variables": [{"name": "t", "type": "f8"}]}) == "cdf\x1fvars:t:f8"
    assert layout_signature("text", {"outline": ["1 Intro"]}) == "text"
    assert layout_signature("csv\x1f:a|b", None) == "csv\x1f:a|b"


def test_a_family_card_names_every_id_behind_a_star_but_only_the_ends_of_a_run():
    from dslake_index.entries import family_entry
    from dslake_index.families import group_files
    from dslake_index.profilers.base import Profile

    members = [Member(f"town/daily_{s}/rain_2024010{d}.csv", f"rain_2024010{d}.csv", "csv\x1f:date|mm")
               for s in (5, 305, 605) for d in (1, 2, 3)]
    family = next(g for g in group_files(members, min_members=3) if g.is_family)
    assert family.glob == "town/daily_*/rain_*.csv" and family.spans_folders
    entry = family_entry(family, Profile(format="csv"), max_listed=40)
    assert "names 5 305 605; 20240101 … 20240103" in entry.card
    assert "The 2 '*'s stand for, in order: 1st: 5 … 605, every 300 numbers (3 values); 2nd: 20240101 … " \
        in entry.description
