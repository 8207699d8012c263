"""docs/errors.md holds exactly what running each case gives now."""

from tests import errors_catalogue


def test_the_catalogue_is_true() -> None:
    assert errors_catalogue.catalogue_in_page() == errors_catalogue.render(), (
        "docs/errors.md is out of date: run python tests/errors_catalogue.py"
    )


def test_every_function_case_raises() -> None:
    for case, outcome in errors_catalogue.api_results():
        assert outcome.startswith(("TypeError: ", "ValueError: ")), (case, outcome)
        message = outcome.split(": ", 1)[1]
        assert message[0].islower() and not message.endswith("."), (case, message)


def test_every_command_case_is_one_line_and_status_2() -> None:
    for command, status, err in errors_catalogue.cli_results():
        assert status == 2, command
        assert err.startswith("python -m pe_reference: error: ") and "\n" not in err, (command, err)
