from index.families import Member, group_folder, name_pattern


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
