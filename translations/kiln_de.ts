<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE">
<context>
    <name>kiln::app::EngineBridge</name>
    <message>
        <location filename="../app/bridge/engine_bridge.cpp" line="64"/>
        <source>There is no image to save yet.</source>
        <translation>Es gibt noch kein Bild zum Speichern.</translation>
    </message>
</context>
<context>
    <name>kiln::ui::MainWindow</name>
    <message>
        <location filename="../ui/main_window.cpp" line="25"/>
        <source>Kiln</source>
        <translation>Kiln</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="30"/>
        <source>A .safetensors checkpoint or a diffusers folder</source>
        <translation>Ein .safetensors-Checkpoint oder ein Diffusers-Ordner</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="31"/>
        <source>Browse…</source>
        <translation>Durchsuchen…</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="34"/>
        <source>Model</source>
        <translation>Modell</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="36"/>
        <source>What to render</source>
        <translation>Was gerendert werden soll</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="38"/>
        <source>What to avoid</source>
        <translation>Was vermieden werden soll</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="41"/>
        <source>Prompt</source>
        <translation>Prompt</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="42"/>
        <source>Negative prompt</source>
        <translation>Negativer Prompt</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="59"/>
        <source>Seed</source>
        <translation>Seed</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="60"/>
        <source>Steps</source>
        <translation>Schritte</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="61"/>
        <source>CFG scale</source>
        <translation>CFG-Skala</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="62"/>
        <source>Width</source>
        <translation>Breite</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="63"/>
        <source>Height</source>
        <translation>Höhe</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="64"/>
        <source>Generate</source>
        <translation>Generieren</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="65"/>
        <source>Render with these settings (Ctrl+Enter)</source>
        <translation>Mit diesen Einstellungen rendern (Strg+Eingabe)</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="66"/>
        <source>Save As…</source>
        <translation>Speichern unter…</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="78"/>
        <source>Idle</source>
        <translation>Bereit</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="116"/>
        <source>Open checkpoint</source>
        <translation>Checkpoint öffnen</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="117"/>
        <source>Checkpoints (*.safetensors)</source>
        <translation>Checkpoints (*.safetensors)</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="124"/>
        <source>Choose a model first: a .safetensors checkpoint or a diffusers folder.</source>
        <translation>Wählen Sie zuerst ein Modell: einen .safetensors-Checkpoint oder einen Diffusers-Ordner.</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="137"/>
        <source>Starting…</source>
        <translation>Starte…</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="142"/>
        <source>Save image</source>
        <translation>Bild speichern</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="142"/>
        <source>PNG images (*.png)</source>
        <translation>PNG-Bilder (*.png)</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="145"/>
        <source>Saving failed</source>
        <translation>Speichern fehlgeschlagen</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="151"/>
        <source>%1 %2/%3</source>
        <translation>%1 %2/%3</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="157"/>
        <source>Done</source>
        <translation>Fertig</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="157"/>
        <source>Done. Note: %1</source>
        <translation>Fertig. Hinweis: %1</translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="164"/>
        <source>Failed: %1</source>
        <translation>Fehlgeschlagen: %1</translation>
    </message>
</context>
</TS>
